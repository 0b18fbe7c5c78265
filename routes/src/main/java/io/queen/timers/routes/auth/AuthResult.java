package io.queen.timers.routes.auth;

import io.queen.timers.client.command.RejectReason;

/** What the token of one record proves: a producer identity, or a refusal with its reason. */
public sealed interface AuthResult {

    /**
     * The token is valid for this topic; {@code sub} becomes the timer's producer_sub (its owner). {@code admin}: the token
     * carries the claim auth.admin.claim names, as JSON true, and may act on any key of its tenant.
     */
    record Verified(String sub, boolean admin) implements AuthResult {
        public Verified(String sub) {
            this(sub, false);
        }
    }

    /** {@code reason} is {@link RejectReason#UNAUTHENTICATED} or {@link RejectReason#FORBIDDEN}; {@code detail} is one line. */
    record Refused(RejectReason reason, String detail) implements AuthResult {}
}
