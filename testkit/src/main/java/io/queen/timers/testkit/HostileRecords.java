package io.queen.timers.testkit;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Command records nobody chose by hand, for fuzzing the bridge: a structured command (JSON envelope or
 * headers form) with zero to four of its fields mutated — type swaps, edge numbers, dates and
 * offsets, unicode with control characters and lone surrogates, deep nesting, duplicate keys, huge
 * strings, random {@code queen-*} header sets, keys that do and do not match, cut or flipped bytes,
 * odd timestamps. About a third come out valid. Everything is drawn from the {@link Random} given, so
 * one seed is one sequence of records (print it when a test fails).
 */
public final class HostileRecords {

    /** One record as a producer would send it; {@code timestampMs} negative means "no timestamp". */
    public record HostileRecord(byte[] key, byte[] value, RecordHeaders headers, long timestampMs, String mutations) {}

    private static final String[] OPS = {"schedule", "reschedule", "cancel"};
    private static final String[] BAD_OPS = {"Schedule", "SCHEDULE", "fire", "", "delete", "cancel ", "schedule\u0000"};
    private static final String[] EDGE_NUMBERS = {"0", "-0", "-1", "1", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "1e400", "-1e400", "1E-400", "1.5", "60000.0", "6e4", "1e3",
        "0.12345678901234567890123", "99999999999999999999999999999999999999999", "7776000000", "7776000001", "2.5e-324",
        "1" + "0".repeat(1200)};
    private static final String[] EDGE_DATES = {"+300000000-01-01T00:00:00Z", "+999999999-12-31T23:59:59.999999999-18:00",
        "-999999999-01-01T00:00:00+18:00", "9999-12-31T23:59:59.999Z", "+10000-01-01T00:00:00Z", "1970-01-01T00:00:00Z",
        "1969-12-31T23:59:59.999999999Z", "0000-01-01T00:00:00Z", "2026-12-02T12:00:00+18:00", "2026-12-02T12:00:00-18:00",
        "2026-12-02T12:00:00+19:00", "2026-12-02T12:00:00+05:45", "2026-12-02T12:00:00", "2026-02-30T00:00:00Z",
        "2026-12-02T24:00:00Z", "2026-12-02T12:00:00.123456789Z", "2026-12-02T12:00Z", "2026-12-02", "now", "",
        "2026-12-02T12:00:00+01:00[Europe/Paris]", "2026-12-02T12:00:00\u0000Z", "2026-12-02t12:00:00z"};
    private static final String[] FIELDS = {"op", "queue", "timerKey", "partition", "delayMs", "deliverAt", "txn", "payload"};
    private static final String[] EXTRA_FIELDS = {"tenantId", "tenant_id", "Tenant", "producerSub", "messageId", "attempts",
        "claimToken", "claimed-until", "shard", "payloadZstd", "encrypted", "delay_ms", "foo", "", "\u0000", "op\u0000"};
    private static final String[] HEADERS = {"queen-op", "queen-queue", "queen-timer-key", "queen-partition", "queen-delay-ms",
        "queen-deliver-at", "queen-txn", "queen-tenant", "queen-tenant-id", "queen-message-id", "queen-foo", "Queen-Op",
        "QUEEN-QUEUE", "queen-", "traceparent", "x-foo"};
    private static final long NOW = 1_796_212_800_000L; // 2026-12-02T12:00:00Z, a fixed instant: the same seed, the same records

    private HostileRecords() {}

    /** The next record; {@code queue} is the queue valid commands name (so a test can find their timers). */
    public static HostileRecord next(Random r, String queue) {
        List<String[]> fields = new ArrayList<>(); // [name, raw JSON text]; a list, so a name may repeat
        String op = OPS[r.nextInt(OPS.length)];
        String timerKey = r.nextInt(4) == 0 ? unicode(r, 1 + r.nextInt(40), false) : "k-" + r.nextInt(1_000_000);
        fields.add(new String[] {"op", quote(op)});
        fields.add(new String[] {"queue", quote(queue)});
        fields.add(new String[] {"timerKey", quote(timerKey)});
        if (r.nextInt(4) == 0) {
            fields.add(new String[] {"partition", quote(r.nextBoolean() ? "p-" + r.nextInt(10) : unicode(r, 1 + r.nextInt(20), false))});
        }
        if (!op.equals("cancel")) {
            fields.add(r.nextBoolean() ? new String[] {"delayMs", Long.toString(r.nextInt(3_600_000))}
                    : new String[] {"deliverAt", quote("2026-12-0" + (2 + r.nextInt(7)) + "T1" + r.nextInt(10) + ":00:00Z")});
            fields.add(new String[] {"txn", quote("t-" + r.nextInt(1000))});
            fields.add(new String[] {"payload", json(r, 0)});
        }
        String keyText = queue + "/" + timerKey;
        byte[] key = keyText.getBytes(StandardCharsets.UTF_8);
        long timestamp = NOW + r.nextInt(1_000_000);
        boolean headersForm = r.nextInt(5) == 0;
        List<String> applied = new ArrayList<>();
        int mutations = r.nextInt(3) == 0 ? 0 : 1 + r.nextInt(4);
        RecordHeaders extraHeaders = new RecordHeaders();
        byte[][] byteMutation = {null};
        for (int m = 0; m < mutations; m++) {
            int kind = r.nextInt(14);
            if (fields.isEmpty() && (kind == 0 || kind == 5 || kind == 7)) {
                kind = 8; // every field was removed: nothing to pick, so add one (HostileCommandsFuzzIT seed -6752259061244011876 threw here)
            }
            applied.add(Integer.toString(kind));
            switch (kind) {
                case 0 -> { // type swap
                    String[] f = fields.get(r.nextInt(fields.size()));
                    f[1] = json(r, 3);
                }
                case 1 -> set(fields, "delayMs", EDGE_NUMBERS[r.nextInt(EDGE_NUMBERS.length)]);
                case 2 -> set(fields, "deliverAt", quote(EDGE_DATES[r.nextInt(EDGE_DATES.length)]));
                case 3 -> set(fields, new String[] {"queue", "timerKey", "partition", "txn", "op"}[r.nextInt(5)],
                        quote(unicode(r, r.nextInt(60), true)));
                case 4 -> {
                    int depth = 1 + r.nextInt(3000);
                    set(fields, "payload", "[".repeat(depth) + "1" + "]".repeat(depth));
                }
                case 5 -> { // duplicate key
                    String[] f = fields.get(r.nextInt(fields.size()));
                    fields.add(r.nextInt(fields.size() + 1), new String[] {f[0], r.nextBoolean() ? f[1] : json(r, 2)});
                }
                case 6 -> set(fields, r.nextBoolean() ? "payload" : "txn", quote("x".repeat(r.nextInt(200_000))));
                case 7 -> fields.remove(r.nextInt(fields.size()));
                case 8 -> fields.add(r.nextInt(fields.size() + 1), new String[] {EXTRA_FIELDS[r.nextInt(EXTRA_FIELDS.length)], json(r, 1)});
                case 9 -> key = switch (r.nextInt(5)) {
                    case 0 -> null;
                    case 1 -> (queue + "/other").getBytes(StandardCharsets.UTF_8);
                    case 2 -> new byte[] {(byte) 0xC3, (byte) 0x28, '/', 'k'};
                    case 3 -> (keyText + "\r\n\u001b[31m").getBytes(StandardCharsets.UTF_8);
                    default -> new byte[0];
                };
                case 10 -> byteMutation[0] = new byte[] {(byte) r.nextInt(3)};
                case 11 -> headersForm = true;
                case 12 -> { // random queen-* header set on top of whatever form
                    for (int h = r.nextInt(4); h >= 0; h--) {
                        String name = HEADERS[r.nextInt(HEADERS.length)];
                        byte[] v = r.nextInt(6) == 0 ? new byte[] {(byte) 0xFF, (byte) 0xFE} : unicode(r, r.nextInt(20), true).getBytes(StandardCharsets.UTF_8);
                        extraHeaders.add(name, r.nextInt(10) == 0 ? null : v);
                    }
                }
                default -> timestamp = new long[] {-1, 0, Long.MAX_VALUE, Long.MAX_VALUE - 1000, 253_402_300_799_999L, r.nextLong()}[r.nextInt(6)];
            }
        }
        byte[] value;
        RecordHeaders headers = new RecordHeaders();
        if (headersForm) {
            String payload = null;
            for (String[] f : fields) {
                String name = switch (f[0]) {
                    case "op" -> "queen-op";
                    case "queue" -> "queen-queue";
                    case "timerKey" -> "queen-timer-key";
                    case "partition" -> "queen-partition";
                    case "delayMs" -> "queen-delay-ms";
                    case "deliverAt" -> "queen-deliver-at";
                    case "txn" -> "queen-txn";
                    case "payload" -> null;
                    default -> "queen-" + f[0];
                };
                if (name == null) {
                    payload = f[1];
                } else {
                    headers.add(name, unquote(f[1]).getBytes(StandardCharsets.UTF_8));
                }
            }
            value = payload == null ? (r.nextBoolean() ? null : new byte[0]) : payload.getBytes(StandardCharsets.UTF_8);
        } else {
            StringBuilder b = new StringBuilder("{");
            for (String[] f : fields) {
                b.append(b.length() > 1 ? "," : "").append(r.nextInt(8) == 0 ? " \n\t" : "").append(quote(f[0])).append(':').append(f[1]);
            }
            value = b.append('}').toString().getBytes(StandardCharsets.UTF_8);
        }
        extraHeaders.forEach(headers::add);
        if (byteMutation[0] != null && value != null && value.length > 0) {
            value = switch (byteMutation[0][0]) {
                case 0 -> Arrays.copyOf(value, r.nextInt(value.length));
                case 1 -> {
                    byte[] v = value.clone();
                    for (int i = 1 + r.nextInt(4); i > 0; i--) {
                        v[r.nextInt(v.length)] = (byte) r.nextInt(256);
                    }
                    yield v;
                }
                default -> new String(value, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_16);
            };
        }
        return new HostileRecord(key, value, headers, timestamp, applied.isEmpty() ? "valid" : String.join(",", applied));
    }

    /** A valid schedule of {@code queue}/{@code timerKey} due now, in the envelope form. */
    public static byte[] validSchedule(String queue, String timerKey, String txn, String payload) {
        return ("{\"op\":\"schedule\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + timerKey + "\",\"delayMs\":0,\"txn\":\"" + txn
                + "\",\"payload\":" + payload + "}").getBytes(StandardCharsets.UTF_8);
    }

    private static void set(List<String[]> fields, String name, String raw) {
        for (String[] f : fields) {
            if (f[0].equals(name)) {
                f[1] = raw;
                return;
            }
        }
        fields.add(new String[] {name, raw});
    }

    /** A random JSON value; {@code depth} limits nesting. Numbers and strings include the edge forms. */
    private static String json(Random r, int depth) {
        return switch (r.nextInt(depth > 2 ? 4 : 6)) {
            case 0 -> EDGE_NUMBERS[r.nextInt(EDGE_NUMBERS.length)];
            case 1 -> quote(unicode(r, r.nextInt(30), true));
            case 2 -> new String[] {"true", "false", "null"}[r.nextInt(3)];
            case 3 -> Integer.toString(r.nextInt());
            case 4 -> {
                StringBuilder b = new StringBuilder("[");
                for (int i = r.nextInt(4); i > 0; i--) {
                    b.append(b.length() > 1 ? "," : "").append(json(r, depth + 1));
                }
                yield b.append(']').toString();
            }
            default -> {
                StringBuilder b = new StringBuilder("{");
                for (int i = r.nextInt(4); i > 0; i--) {
                    b.append(b.length() > 1 ? ", " : "").append(quote("f" + r.nextInt(5))).append(" : ").append(json(r, depth + 1));
                }
                yield b.append('}').toString();
            }
        };
    }

    /** Text with ordinary letters, control characters, lone surrogates, NUL, emoji, right-to-left and combining marks. */
    private static String unicode(Random r, int length, boolean anything) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < length; i++) {
            int kind = r.nextInt(anything ? 10 : 6);
            switch (kind) {
                case 0, 1, 2 -> b.append((char) ('a' + r.nextInt(26)));
                case 3 -> b.appendCodePoint(0x1F600 + r.nextInt(50));
                case 4 -> b.append("שלום日本é\u0301\u200b\uFEFF".charAt(r.nextInt(9)));
                case 5 -> b.append("-./_".charAt(r.nextInt(4)));
                case 6 -> b.append((char) r.nextInt(0x20)); // C0 controls: NUL, CR, LF, ESC, ...
                case 7 -> b.append((char) (0xD800 + r.nextInt(0x800))); // a lone surrogate
                case 8 -> b.append("\u202e\u2028\u0085\u007f\u009b".charAt(r.nextInt(5)));
                default -> b.append((char) r.nextInt(0x10000));
            }
        }
        return b.toString();
    }

    /** A JSON string literal; characters JSON cannot hold raw are escaped (lone surrogates too, as \\uXXXX). */
    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20 || Character.isSurrogate(c) && !(Character.isHighSurrogate(c) && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1)))) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
                if (Character.isHighSurrogate(c)) {
                    b.append(s.charAt(++i));
                }
            }
        }
        return b.append('"').toString();
    }

    /** The text a header would carry for a raw JSON snippet: a string literal's content, anything else as it is. */
    private static String unquote(String raw) {
        if (raw.length() >= 2 && raw.startsWith("\"") && raw.endsWith("\"") && !raw.contains("\\")) {
            return raw.substring(1, raw.length() - 1);
        }
        return raw;
    }

    /** For a failure message: which form and mutations a record had. */
    public static String describe(HostileRecord rec) {
        return "mutations " + rec.mutations() + ", timestamp " + rec.timestampMs() + ", key "
                + (rec.key() == null ? "null" : Arrays.toString(Arrays.copyOf(rec.key(), Math.min(40, rec.key().length))))
                + ", value " + (rec.value() == null ? "null" : new String(rec.value(), 0, Math.min(300, rec.value().length), StandardCharsets.UTF_8));
    }
}
