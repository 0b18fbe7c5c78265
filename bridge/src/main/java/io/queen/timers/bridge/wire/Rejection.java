package io.queen.timers.bridge.wire;

import io.queen.timers.client.command.RejectReason;

/**
 * A record that is not a valid command. {@code kafkaKey} is the record key when it could be read
 * (it keys the {@code rejected} audit event), else null; {@code detail} is one line for a person.
 */
public record Rejection(RejectReason reason, String detail, String kafkaKey) implements Parsed {}
