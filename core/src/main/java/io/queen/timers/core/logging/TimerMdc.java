package io.queen.timers.core.logging;

import java.util.UUID;
import org.slf4j.MDC;

/**
 * The timer a log line is about, as MDC fields ({@code tenant}, {@code queue}, {@code key}, {@code trace_id}):
 * {@code log.format=json} writes them as fields of their own (masked like the message). Set around the lines
 * that name ONE timer (an internal rejection, a permanent fire failure, a refusal, a dead-letter, a suspect
 * fired alone), not around every record of a batch: nothing logs per record on the hot path, so an MDC put and
 * remove per record would cost without ever being read. Use with try-with-resources; null values are left out.
 */
public final class TimerMdc implements AutoCloseable {

    public static final String TENANT = "tenant";
    public static final String QUEUE = "queue";
    public static final String KEY = "key";
    public static final String TRACE_ID = "trace_id";
    /** The fields in the order the JSON log writes them. */
    public static final String[] FIELDS = {TENANT, QUEUE, KEY, TRACE_ID};

    private TimerMdc() {}

    /** {@code traceId}: the W3C trace id (32 hex digits) or null. */
    public static TimerMdc of(UUID tenant, String queue, String key, String traceId) {
        put(TENANT, tenant == null ? null : tenant.toString());
        put(QUEUE, queue);
        put(KEY, key);
        put(TRACE_ID, traceId);
        return new TimerMdc();
    }

    /** A trace id kept as a UUID (ClaimedTimer.traceId) in its W3C form: 32 lower-case hex digits. */
    public static String traceId(UUID id) {
        return id == null ? null : id.toString().replace("-", "");
    }

    private static void put(String field, String value) {
        if (value != null) {
            MDC.put(field, value);
        }
    }

    @Override
    public void close() {
        for (String f : FIELDS) {
            MDC.remove(f);
        }
    }
}
