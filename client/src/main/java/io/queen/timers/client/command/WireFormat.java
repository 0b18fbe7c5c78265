package io.queen.timers.client.command;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The command wire format, written down once (docs/commands.md): field and header names, the record
 * key, and the fixed limits. {@link TimerCommand} writes it, the bridge's parser reads it, and
 * {@code schemas/command-envelope.schema.json} says the same for producers in other languages
 * (a test checks the schema against these constants).
 */
public final class WireFormat {

    private WireFormat() {}

    // JSON envelope fields.
    public static final String OP = "op";
    public static final String QUEUE = "queue";
    public static final String TIMER_KEY = "timerKey";
    public static final String PARTITION = "partition";
    public static final String DELAY_MS = "delayMs";
    public static final String DELIVER_AT = "deliverAt";
    public static final String TXN = "txn";
    public static final String PAYLOAD = "payload";
    // A recurrence (docs/commands.md#recurring-timers), instead of delayMs/deliverAt: cron (with zone) or every,
    // and the optional window, count and catch-up policy of either.
    public static final String CRON = "cron";
    public static final String ZONE = "zone";
    public static final String EVERY = "every";
    public static final String START_AT = "startAt";
    public static final String END_AT = "endAt";
    public static final String MAX_OCCURRENCES = "maxOccurrences";
    public static final String CATCH_UP = "catchUp";
    public static final Set<String> FIELDS = Set.of(OP, QUEUE, TIMER_KEY, PARTITION, DELAY_MS, DELIVER_AT, TXN, PAYLOAD,
            CRON, ZONE, EVERY, START_AT, END_AT, MAX_OCCURRENCES, CATCH_UP);

    // Headers form: a record with a queen-op header; the value is the payload.
    public static final String HEADER_PREFIX = "queen-";
    public static final String H_OP = "queen-op";
    public static final String H_QUEUE = "queen-queue";
    public static final String H_TIMER_KEY = "queen-timer-key";
    public static final String H_PARTITION = "queen-partition";
    public static final String H_DELAY_MS = "queen-delay-ms";
    public static final String H_DELIVER_AT = "queen-deliver-at";
    public static final String H_TXN = "queen-txn";
    public static final String H_CRON = "queen-cron";
    public static final String H_ZONE = "queen-zone";
    public static final String H_EVERY = "queen-every";
    public static final String H_START_AT = "queen-start-at";
    public static final String H_END_AT = "queen-end-at";
    public static final String H_MAX_OCCURRENCES = "queen-max-occurrences";
    public static final String H_CATCH_UP = "queen-catch-up";
    /** The producer's token on topics with {@code topic.<name>.auth=jwt} (docs/security.md#producer-identity); allowed in either form. */
    public static final String H_AUTH = "queen-auth";
    public static final Set<String> HEADERS = Set.of(H_OP, H_QUEUE, H_TIMER_KEY, H_PARTITION, H_DELAY_MS, H_DELIVER_AT, H_TXN, H_AUTH,
            H_CRON, H_ZONE, H_EVERY, H_START_AT, H_END_AT, H_MAX_OCCURRENCES, H_CATCH_UP);

    /** catchUp's values: what a series does with occurrences an outage made it miss (docs/commands.md#recurring-timers). */
    public static final Set<String> CATCH_UP_POLICIES = Set.of("one", "all", "none");
    public static final String DEFAULT_CATCH_UP = "one";
    /**
     * The shortest {@code every} any deployment may allow (the floor of the bridge's recurring.min.period): a series is a
     * control-plane thing, and each occurrence is a fire.
     */
    public static final java.time.Duration EVERY_MIN = java.time.Duration.ofSeconds(1);
    /**
     * The longest {@code cron} text, in characters: the rule is copied into the stored row and into every event of the
     * series, so its length is bounded like the txn's. Ranges and steps write any schedule cron-utils reads in far less (the
     * longest rule the project's tests use is 40); 256 leaves room for hand-written lists of values.
     */
    public static final int CRON_MAX_CHARS = 256;
    /** catchUp {@code all} fires at most this many missed occurrences after one outage; older ones are skipped. */
    public static final int CATCH_UP_ALL_MAX = 100;

    /**
     * The txn of one occurrence of a recurring timer: the series' txn, '@', the occurrence's instant as
     * {@link Instant#toString()} writes it (UTC, ISO-8601). "Was it sent?" asks the log for this txn.
     */
    public static String occurrenceTxn(String seriesTxn, Instant occurrence) {
        return seriesTxn + "@" + occurrence;
    }

    /** W3C Trace Context header, read in either form; not a {@code queen-} header (docs/tracing.md#trace-context). */
    public static final String TRACEPARENT = "traceparent";
    /** W3C Trace Context's vendor list, read with a valid {@link #TRACEPARENT} and kept with it (docs/tracing.md#trace-context). */
    public static final String TRACESTATE = "tracestate";

    /**
     * Names the server owns, compared by {@link #isServerOwned}: case-insensitive, with '_' and '-'
     * removed, so tenant_id, Tenant-Id and tenantId all match. A command naming one is rejected.
     */
    public static final Set<String> SERVER_OWNED = Set.of("tenant", "tenantid", "producersub", "producer", "sub", "messageid",
            "attempts", "lasterror", "claimtoken", "claimeduntil", "shard", "visibleat", "createdat", "updatedat",
            "payloadzstd", "encrypted");

    public static final String DEFAULT_PARTITION = "Default";
    /** queue: 1-255 characters of [A-Za-z0-9._-]. */
    public static final Pattern QUEUE_PATTERN = Pattern.compile("[A-Za-z0-9._-]{1,255}");
    /** timerKey, partition, txn: 1..max Unicode code points, no NUL, no unpaired surrogate. */
    public static final int TIMER_KEY_MAX_CODE_POINTS = 512;
    public static final int PARTITION_MAX_CODE_POINTS = 255;
    public static final int TXN_MAX_CODE_POINTS = 1024;
    /** The earliest deliverAt any command may name. */
    public static final Instant EARLIEST_DELIVERY = Instant.EPOCH;
    /**
     * The latest delivery time any command may name, whatever its timestamp: the last instant with a
     * four-digit year. Far inside both {@code long} epoch milliseconds and PostgreSQL's timestamptz,
     * so no arithmetic after validation can overflow.
     */
    public static final Instant LATEST_DELIVERY = Instant.parse("9999-12-31T23:59:59.999Z");

    /** The record key of every command for one timer: {@code <queue>/<timerKey>}, so its commands keep their order. */
    public static String key(String queue, String timerKey) {
        return queue + "/" + timerKey;
    }

    public static byte[] keyBytes(String queue, String timerKey) {
        return key(queue, timerKey).getBytes(StandardCharsets.UTF_8);
    }

    public static boolean isServerOwned(String name) {
        return SERVER_OWNED.contains(name.toLowerCase(Locale.ROOT).replace("_", "").replace("-", ""));
    }

    /** 1..max code points, no NUL (PostgreSQL text cannot hold it), no unpaired surrogate (not encodable as UTF-8). */
    public static boolean validText(String s, int maxCodePoints) {
        if (s.isEmpty()) {
            return false;
        }
        int count = 0;
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == 0) {
                return false;
            }
            if (Character.isHighSurrogate(ch)) {
                if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
                    return false;
                }
                i++;
            } else if (Character.isLowSurrogate(ch)) {
                return false;
            }
            if (++count > maxCodePoints) {
                return false;
            }
        }
        return true;
    }
}
