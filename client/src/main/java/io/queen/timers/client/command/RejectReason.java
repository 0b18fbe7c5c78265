package io.queen.timers.client.command;

/**
 * Why a record was rejected: the closed list (docs/commands.md). A rejected record is consumed,
 * never retried, and yields exactly one {@code rejected} audit event carrying this reason.
 */
public enum RejectReason {
    /** The value is not valid UTF-8 JSON, not an object (envelope form), or has duplicate or trailing content. */
    MALFORMED_JSON("malformed_json"),
    /** {@code op} is not schedule, reschedule or cancel. */
    UNKNOWN_OP("unknown_op"),
    /** A required field or header is absent (op, queue, timerKey; txn, time and payload for schedule). */
    MISSING_FIELD("missing_field"),
    /** A field has the wrong JSON type (for example a number where a string belongs). */
    WRONG_TYPE("wrong_type"),
    /** A field or queen-* header the command form does not have, or one its op does not take. */
    UNKNOWN_FIELD("unknown_field"),
    /** A field the server owns (tenant, producerSub, messageId, attempts, claimToken, ...): rejected, never ignored. */
    SERVER_OWNED_FIELD("server_owned_field"),
    /** queue is not 1-255 characters of [A-Za-z0-9._-]. */
    BAD_QUEUE("bad_queue"),
    /** timerKey is not 1-512 characters of Unicode without NUL. */
    BAD_TIMER_KEY("bad_timer_key"),
    /** partition is empty, longer than 255 characters, or holds NUL. */
    BAD_PARTITION("bad_partition"),
    /** txn is empty, longer than 1024 characters, or holds NUL. */
    BAD_TXN("bad_txn"),
    /** Both delayMs and deliverAt, a negative or non-integer delayMs, an unparsable deliverAt, or no record timestamp. */
    BAD_TIME("bad_time"),
    /** The delivery time is further than the horizon (bridge.horizon) after the record's timestamp. */
    HORIZON("horizon"),
    /** The compact payload is larger than bridge.payload.max.bytes. */
    PAYLOAD_TOO_LARGE("payload_too_large"),
    /** The record key is absent or is not {@code <queue>/<timerKey>}. */
    KEY_MISMATCH("key_mismatch"),
    /** A queen-* header is repeated or is not valid UTF-8. */
    BAD_HEADER("bad_header"),
    /**
     * This record met an unexpected error: a bug in the parser, or a database error caused by its
     * values (SQLSTATE class 22, 23 or 54), found by bisecting its batch. The event carries the error text.
     */
    INTERNAL("internal"),
    /**
     * The topic requires a token ({@code topic.<name>.auth=jwt}) and the queen-auth header is absent, unsigned, badly signed, has an unknown
     * crit parameter, lacks exp or iat, lives longer than auth.max.token.lifetime, is expired or not yet valid, or lacks the topic's
     * aud or iss.
     */
    UNAUTHENTICATED("unauthenticated"),
    /** A valid token that may not write here: its tenant claim is not the topic's tenant, is null, or is missing (unless optional). */
    FORBIDDEN("forbidden"),
    /** The destination queue requires encryption and the bridge has no encryption.key: never stored in clear. */
    ENCRYPTION_UNAVAILABLE("encryption_unavailable"),
    /**
     * A schedule of a key not staged yet for a tenant that already holds tenant.max.pending pending timers (a reschedule or
     * cancel of a staged key always passes).
     */
    TENANT_QUOTA("tenant_quota"),
    /**
     * On a topic with auth=jwt, a schedule, reschedule or cancel of a key staged (pending or in a sweeper's hands) by another
     * producer: only the token sub that scheduled it, or a token carrying the admin claim (auth.admin.claim), may act on it.
     * The staged timer is unchanged. Not decided on topics with auth=none, which promise no ownership.
     */
    NOT_OWNER("not_owner"),
    /**
     * A schedule or reschedule that would make a key a recurring series (it holds no rule yet) for a tenant that already holds
     * tenant.max.recurring series (a reschedule of an existing series, or to a one-shot time, always passes).
     */
    RECURRING_QUOTA("recurring_quota"),
    /**
     * A recurrence whose occurrences may come closer than the bridge's recurring.min.period: an every below it, or a cron with
     * two occurrences closer than it.
     */
    PERIOD_TOO_SHORT("period_too_short"),
    /**
     * A recurrence that cannot be read: cron not 5 or 6 fields cron-utils accepts or longer than 256 characters, zone not an
     * IANA region id (a fixed offset such as +05:00 is refused), every not an ISO-8601 duration of at least 1 s, startAt/endAt not instants with offset, maxOccurrences not an integer >= 1, catchUp not one, all
     * or none; both cron and every, or either with delayMs/deliverAt; zone without cron; a window field without a rule;
     * endAt before startAt.
     */
    BAD_RULE("bad_rule"),
    /** A valid recurrence with no occurrence: none at or after startAt before endAt (or before the year 10000). */
    NO_OCCURRENCE("no_occurrence"),
    /**
     * The bridge does not read this record: counted on its wire form before any of it becomes objects, it is beyond the
     * record limits (a key over 4 KiB, more headers or header bytes than bridge.record.headers.max.count / .max.bytes, a
     * body longer than any record within them can be: up to 2 GiB can be declared in a few KB of zstd), its length lies, or
     * its batch fails its checksum. A record beyond a limit whose length is honest is answered alone; after a lie or an
     * oversized body in a compressed batch, each later record of the same producer batch is answered so too, since the
     * batch is one stream that cannot be read past it. Decided by the record's framing and sizes, not by the command's content.
     */
    UNREADABLE_RECORD("unreadable_record");

    private final String wireName;

    RejectReason(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    public static java.util.Optional<RejectReason> fromWire(String name) {
        for (RejectReason r : values()) {
            if (r.wireName.equals(name)) {
                return java.util.Optional.of(r);
            }
        }
        return java.util.Optional.empty();
    }
}
