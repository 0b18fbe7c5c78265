package io.queen.timers.bridge.apply;

import io.queen.timers.client.command.RejectReason;

/** The verdict of one record; {@code reason} is set only for {@link Verdict#REJECTED}. */
public record Decision(Source source, Verdict verdict, RejectReason reason) {}
