package io.queen.timers.bridge.auth;

import io.queen.timers.client.command.RejectReason;

/** What the token of one record proves: a producer identity, or a refusal with its reason. */
public sealed interface AuthResult {

    /** The token is valid for this topic; {@code sub} becomes the timer's producer_sub. */
    record Verified(String sub) implements AuthResult {}

    /** {@code reason} is {@link RejectReason#UNAUTHENTICATED} or {@link RejectReason#FORBIDDEN}; {@code detail} is one line. */
    record Refused(RejectReason reason, String detail) implements AuthResult {}
}
