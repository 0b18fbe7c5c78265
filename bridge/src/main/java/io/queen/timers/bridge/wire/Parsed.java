package io.queen.timers.bridge.wire;

/** What a record turns into: a {@link Command} to apply or a {@link Rejection} to audit. */
public sealed interface Parsed permits Command, Rejection {}
