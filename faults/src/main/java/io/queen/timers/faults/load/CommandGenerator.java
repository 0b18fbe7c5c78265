package io.queen.timers.faults.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.processes.stack.Stack;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * The seeded command stream: schedule / reschedule / cancel over {@code keys} keys in {@link #QUEUES}
 * queues and {@link #PARTITIONS} log partitions, for two tenants that use the same queue and key names
 * (one command topic each); delays 0..3 s (one in five 30..90 s: {@link #FAR_FRACTION}; a third of cancels and reschedules aimed at those), a few deliverAt in the past; a fraction of hostile records
 * (every reject reason the bridge knows, and shapes meant to hurt a parser), a fraction of poisoned
 * schedules (own keys, a txn the destination refuses), some large payloads. Every record carries a
 * {@code faults-seq} header (not a {@code queen-} header, so the bridge ignores it) for the checker.
 *
 * <p>A fraction of commands are recurring series instead ({@link #series}): each on a key of its own, so the checker
 * judges a series by its occurrences alone, catchUp {@code all}, so every occurrence must be delivered exactly once
 * whatever the faults did. Their draws come from a random of their own, and the one-shot command they replace is drawn
 * all the same: one --seed value gives the same one-shot commands at every other seq whatever the series fraction.
 *
 * <p>Same seed, same stream (what the broker makes of it under faults is the run's business).
 */
public final class CommandGenerator {

    public static final String SEQ_HEADER = "faults-seq";
    public static final int QUEUES = 4;
    public static final String[] PARTITIONS = {"Default", "p1", "p2"};
    public static final String POISON_TXN_PREFIX = "poison-";
    /** The catch-up policies a series is sent with, one in three each (docs/recurring.md "The fire of an occurrence"). */
    static final String[] CATCH_UPS = {"all", "one", "none"};
    /** A series has 3 to this many occurrences (1-2 s apart): long enough that cancels, reschedules and faults meet it running. */
    static final int SERIES_MAX_OCCURRENCES = 20;
    /** Series' keys and txns: never a one-shot's, so no one-shot command meets a series. */
    public static final String SERIES_KEY_PREFIX = "rec-";
    public static final String SERIES_TXN_PREFIX = "r-";
    /** A zone with daylight-saving time, so the cron is read in a zone that is not UTC (whole-hour offsets: same seconds). */
    public static final ZoneId SERIES_ZONE = ZoneId.of("Europe/Berlin");
    /**
     * The share of delayMs schedules due far out ({@link #FAR_MIN_MS}..{@link #FAR_MAX_MS}) instead of 0-3 s: a later cancel
     * or reschedule of such a timer arrives while nobody can have claimed it, so a {@code too_late} there is a lost
     * command the checker judges (its {@code too_late} window: Checker.HARNESS_TOO_LATE_SLACK_MS, 24 s).
     */
    public static final double FAR_FRACTION = 0.2;
    public static final int FAR_MIN_MS = 30_000;
    public static final int FAR_MAX_MS = 90_000;
    /**
     * The share of cancels and reschedules aimed at a timer the generator last scheduled due {@link #FAR_MIN_MS} to
     * {@link #FAR_MAX_MS} after now (issue 49, point 4): with keys drawn at random, nine in ten met a timer due within 3 s,
     * inside the {@code too_late} window, where a lost cancel passes as an accepted {@code too_late}. A reschedule aimed so
     * stays far five times in six, and one delayMs schedule in five is far ({@link #FAR_FRACTION}: one in ten left the
     * pool empty too often, 22 % of them met a far timer), so the far timers are not used up.
     */
    public static final int FAR_TARGET_ONE_IN = 3;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final SplittableRandom random;
    private final int keys;
    private final double hostileFraction;
    private final double poisonFraction;
    private final double largeFraction;
    private final double recurringFraction;
    private final SplittableRandom seriesRandom;
    /** Whether a schedule is due far out: a random of its own, so every other draw of a seed is what it was before. */
    private final SplittableRandom farRandom;
    private Supplier<Instant> clock = Instant::now;
    /**
     * The timers the generator last scheduled far out (by tenant/queue/key, when due on the generator's clock), as it sent
     * them: what it aims a third of its cancels and reschedules at. Its own record, not the product's state.
     */
    private final java.util.Map<String, Long> farDue = new java.util.HashMap<>();
    private final List<String> farKeys = new ArrayList<>();

    public CommandGenerator(long seed, int keys, double hostileFraction, double poisonFraction, double largeFraction) {
        this(seed, keys, hostileFraction, poisonFraction, largeFraction, 0);
    }

    /** @param recurringFraction the share of commands that are a recurring series (the harness's default: 1 in 500) */
    public CommandGenerator(long seed, int keys, double hostileFraction, double poisonFraction, double largeFraction, double recurringFraction) {
        this.random = new SplittableRandom(seed);
        this.keys = keys;
        this.hostileFraction = hostileFraction;
        this.poisonFraction = poisonFraction;
        this.largeFraction = largeFraction;
        this.recurringFraction = recurringFraction;
        // Not random.split(): that would draw from the one-shot stream.
        this.seriesRandom = new SplittableRandom(seed ^ 0x2828_2828_2828_2828L);
        this.farRandom = new SplittableRandom(seed ^ 0x3838_3838_3838_3838L);
    }

    /** The clock absolute times are drawn against (deliverAt, startAt); a simulated run gives its virtual one. */
    public CommandGenerator clock(Supplier<Instant> now) {
        this.clock = now;
        return this;
    }

    public GeneratedCommand next(long seq) {
        GeneratedCommand oneShot = oneShot(seq);
        if (recurringFraction > 0 && seriesRandom.nextDouble() < recurringFraction) {
            return series(seq, null);
        }
        // A cancel or reschedule of a series whose moment came takes the one-shot's place (drawn all the same).
        if (!followUps.isEmpty() && followUps.peek().atMs() <= clock.get().toEpochMilli()) {
            return followUp(seq, followUps.poll());
        }
        return oneShot;
    }

    /** Which command comes later for a series: a cancel, or a reschedule to a new rule (docs/fault-harness.md "Recurring series"). */
    private enum FollowUpKind { CANCEL, RESCHEDULE }

    /** A command the generator will send to a series' key at {@code atMs} (its clock), while the series runs. */
    private record FollowUp(long atMs, FollowUpKind kind, int tenant, String queue, String key, String partition) {
    }

    private final java.util.PriorityQueue<FollowUp> followUps = new java.util.PriorityQueue<>(java.util.Comparator.comparingLong(FollowUp::atMs));

    /**
     * A series' fate: a cancel (one in three) or a reschedule to a new rule (one in three) at a moment between its first and
     * its last occurrence, so it meets the series running (or, with the bridge behind, not yet staged, or ended).
     */
    private void planFollowUp(Series s, int tenant, String queue, String key, String partition) {
        int fate = seriesRandom.nextInt(3);
        if (fate == 2) {
            return;
        }
        Instant first = s.occurrences().get(0);
        long span = Duration.between(first, s.occurrences().get(s.occurrences().size() - 1)).toMillis();
        followUps.add(new FollowUp(first.toEpochMilli() + seriesRandom.nextLong(span + 1), fate == 0 ? FollowUpKind.CANCEL : FollowUpKind.RESCHEDULE,
                tenant, queue, key, partition));
    }

    private GeneratedCommand followUp(long seq, FollowUp f) {
        String topic = f.tenant() == 1 ? Stack.COMMANDS_B : Stack.COMMANDS_A;
        if (f.kind() == FollowUpKind.RESCHEDULE) {
            return series(seq, f);
        }
        Intent cancel = new Intent(seq, CommandKind.VALID, f.tenant(), "cancel", f.queue(), f.key(), null, null, null, null, 0, null);
        if (seriesRandom.nextBoolean()) {
            return new GeneratedCommand(seq, cancel, headersForm(seq, topic, f.queue(), f.key(), "cancel", null, null, f.partition(), 0), null);
        }
        ObjectNode cmd = JSON.createObjectNode().put("op", "cancel").put("queue", f.queue()).put("timerKey", f.key());
        return new GeneratedCommand(seq, cancel, envelope(seq, topic, f.queue(), f.key(), cmd), null);
    }

    private GeneratedCommand oneShot(long seq) {
        boolean tenantB = random.nextBoolean();
        int tenant = tenantB ? 1 : 0;
        String topic = tenantB ? Stack.COMMANDS_B : Stack.COMMANDS_A;
        String queue = "faults.q" + random.nextInt(QUEUES);
        String key = "key-" + random.nextInt(keys);
        double dice = random.nextDouble();
        if (dice < hostileFraction) {
            Hostile h = hostile(seq, topic, queue, key);
            return new GeneratedCommand(seq, new Intent(seq, CommandKind.HOSTILE, tenant, null, queue, key, null, null, null, null, 0,
                    h.reason()), h.record(), null);
        }
        if (dice < hostileFraction + poisonFraction) {
            String txn = POISON_TXN_PREFIX + (tenantB ? "b-" : "a-") + seq;
            String partition = PARTITIONS[random.nextInt(PARTITIONS.length)];
            long delay = random.nextInt(2000);
            ObjectNode cmd = JSON.createObjectNode().put("op", "schedule").put("queue", queue).put("timerKey", "px-" + seq)
                    .put("partition", partition).put("delayMs", delay).put("txn", txn);
            ObjectNode payload = payload(random, seq, key, false);
            cmd.set("payload", payload);
            Intent intent = new Intent(seq, CommandKind.POISON, tenant, "schedule", queue, "px-" + seq, partition, txn, delay, null,
                    Intent.payloadHash(payload), null);
            return new GeneratedCommand(seq, intent, envelope(seq, topic, queue, "px-" + seq, cmd), txn);
        }
        return valid(seq, tenant, topic, queue, key);
    }

    /**
     * The random draws are in the order of the generator before intents were recorded: a seed gives the same stream as then
     * (the far targets draw from {@link #farRandom}, which only changes which key a cancel or reschedule names).
     */
    private GeneratedCommand valid(long seq, int tenant, String topic, String queue, String key) {
        double op = random.nextDouble();
        String partition = PARTITIONS[random.nextInt(PARTITIONS.length)];
        boolean aimed = false;
        if ((op < 0.2 || op >= 0.75) && farRandom.nextInt(FAR_TARGET_ONE_IN) == 0) {
            String target = farTarget();
            if (target != null) {
                String[] t = target.split("/", 3);
                tenant = Integer.parseInt(t[0]);
                topic = tenant == 1 ? Stack.COMMANDS_B : Stack.COMMANDS_A;
                queue = t[1];
                key = t[2];
                aimed = true;
            }
        }
        String timer = tenant + "/" + queue + "/" + key;
        if (op < 0.2) {
            forgetFar(timer);
            Intent cancel = new Intent(seq, CommandKind.VALID, tenant, "cancel", queue, key, null, null, null, null, 0, null);
            if (random.nextInt(5) == 0) {
                return new GeneratedCommand(seq, cancel, headersForm(seq, topic, queue, key, "cancel", null, null, partition, 0), null);
            }
            ObjectNode cmd = JSON.createObjectNode().put("op", "cancel").put("queue", queue).put("timerKey", key);
            return new GeneratedCommand(seq, cancel, envelope(seq, topic, queue, key, cmd), null);
        }
        String opName = op < 0.75 ? "schedule" : "reschedule";
        String txn = "t-" + seq;
        ObjectNode payload = payload(random, seq, key, random.nextDouble() < largeFraction);
        long hash = Intent.payloadHash(payload);
        if (random.nextInt(5) == 0) {
            long delay = aimed ? aimedDelay(random.nextInt(3_000)) : far(random.nextInt(3_000));
            noteDue(timer, clock.get().toEpochMilli() + delay);
            Intent intent = new Intent(seq, CommandKind.VALID, tenant, opName, queue, key, partition, txn, delay, null, hash, null);
            return new GeneratedCommand(seq, intent, headersForm(seq, topic, queue, key, opName, txn, payload, partition, delay), null);
        }
        ObjectNode cmd = JSON.createObjectNode().put("op", opName).put("queue", queue).put("timerKey", key).put("partition", partition);
        int when = random.nextInt(20);
        Long delay = null;
        Instant at = null;
        // Whole milliseconds: the timer stores its time in milliseconds, so the oracle's time is exactly the stored one.
        if (when == 0) {
            at = clock.get().truncatedTo(ChronoUnit.MILLIS).minusMillis(random.nextInt(5_000));
        } else if (when == 1) {
            at = clock.get().truncatedTo(ChronoUnit.MILLIS).plusMillis(random.nextInt(3_000));
        } else {
            delay = aimed ? aimedDelay(random.nextInt(3_000)) : far(random.nextInt(3_000));
        }
        noteDue(timer, at != null ? at.toEpochMilli() : clock.get().toEpochMilli() + delay);
        if (at != null) {
            cmd.put("deliverAt", at.toString());
        } else {
            cmd.put("delayMs", delay);
        }
        cmd.put("txn", txn);
        cmd.set("payload", payload);
        Intent intent = new Intent(seq, CommandKind.VALID, tenant, opName, queue, key, partition, txn, delay, at, hash, null);
        return new GeneratedCommand(seq, intent, envelope(seq, topic, queue, key, cmd), null);
    }

    /** {@code drawn}, or (one delayMs schedule in five) a delay of 30-90 s. */
    private long far(int drawn) {
        return farRandom.nextDouble() < FAR_FRACTION ? farDelay() : drawn;
    }

    private long farDelay() {
        return FAR_MIN_MS + farRandom.nextInt(FAR_MAX_MS - FAR_MIN_MS + 1);
    }

    /** A reschedule aimed at a far timer keeps it far two times in three (and else takes {@code drawn}, 0-3 s). */
    private long aimedDelay(int drawn) {
        return farRandom.nextInt(6) == 0 ? drawn : farDelay();
    }

    /** A far timer whose time is 30-90 s after now on the generator's clock, as "tenant/queue/key"; null if none is. */
    private String farTarget() {
        long now = clock.get().toEpochMilli();
        for (int tries = 0; tries < 8 && !farKeys.isEmpty(); tries++) {
            int i = farRandom.nextInt(farKeys.size());
            String k = farKeys.get(i);
            Long due = farDue.get(k);
            if (due != null && due - now >= FAR_MIN_MS && due - now <= FAR_MAX_MS) {
                return k;
            }
            if (due == null || due - now < FAR_MIN_MS) {
                // gone, or too near now: no longer a target (swap-remove keeps the draw O(1))
                farKeys.set(i, farKeys.get(farKeys.size() - 1));
                farKeys.remove(farKeys.size() - 1);
                if (due != null) {
                    farDue.remove(k);
                }
            }
        }
        return null;
    }

    /** What the generator sent a timer last: due at {@code dueMs}; a far one becomes a target. */
    private void noteDue(String timer, long dueMs) {
        if (dueMs - clock.get().toEpochMilli() >= FAR_MIN_MS) {
            if (farDue.put(timer, dueMs) == null) {
                farKeys.add(timer);
            }
        } else {
            farDue.remove(timer);
        }
    }

    private void forgetFar(String timer) {
        farDue.remove(timer);
    }

    /**
     * A recurring series on a key of its own: {@code every} PT1S or PT2S from a startAt 2-5 s ahead, or a seconds-field cron
     * in {@link #SERIES_ZONE}; 3-8 occurrences, ended by maxOccurrences or by an endAt (sometimes exactly on the last
     * occurrence: the window includes its end); catchUp {@code all}; half in the envelope, half in the headers form.
     * startAt is always sent, so the oracle knows the grid without the record's timestamp.
     */
    private GeneratedCommand series(long seq, FollowUp rescheduling) {
        SplittableRandom r = seriesRandom;
        int tenant = r.nextBoolean() ? 1 : 0;
        String queue = "faults.q" + r.nextInt(QUEUES);
        String key = SERIES_KEY_PREFIX + seq;
        String partition = PARTITIONS[r.nextInt(PARTITIONS.length)];
        String op = "schedule";
        if (rescheduling != null) {
            // a new rule on the running series' key (its tenant, queue and partition): the old series ends at its verdict
            tenant = rescheduling.tenant();
            queue = rescheduling.queue();
            key = rescheduling.key();
            partition = rescheduling.partition();
            op = "reschedule";
        }
        String topic = tenant == 1 ? Stack.COMMANDS_B : Stack.COMMANDS_A;
        String txn = SERIES_TXN_PREFIX + seq;
        String catchUp = CATCH_UPS[r.nextInt(CATCH_UPS.length)];
        int n = 3 + r.nextInt(SERIES_MAX_OCCURRENCES - 2);
        boolean byEnd = r.nextBoolean();
        Instant startAt = clock.get().truncatedTo(ChronoUnit.MILLIS).plusMillis(2_000 + r.nextInt(3_000));
        String cron = null;
        Duration every = null;
        if (r.nextBoolean()) {
            every = Duration.ofSeconds(1 + r.nextInt(2));
        } else {
            cron = Series.cronOf(Series.CRON_SECONDS[r.nextInt(Series.CRON_SECONDS.length)]);
            if (r.nextBoolean()) {
                startAt = startAt.truncatedTo(ChronoUnit.SECONDS); // a whole second, now and then on the grid: "at or after"
            }
        }
        ZoneId zone = cron == null ? null : SERIES_ZONE;
        Series counted = Series.of(txn, cron, zone, every, startAt, null, n, catchUp);
        Series s = counted;
        if (byEnd) {
            Instant last = counted.occurrences().get(n - 1);
            long gap = Duration.between(last, counted.nextAfter(last)).toMillis();
            Instant endAt = last.plusMillis(r.nextInt(4) == 0 ? 0 : r.nextLong(gap));
            s = Series.of(txn, cron, zone, every, startAt, endAt, null, catchUp);
        }
        if (s.occurrences().size() != n) {
            throw new IllegalStateException("series " + txn + " has " + s.occurrences().size() + " occurrences, meant " + n + ": " + s.rule());
        }
        ObjectNode payload = payload(r, seq, key, false);
        Intent intent = new Intent(seq, CommandKind.VALID, tenant, op, queue, key, partition, txn, null, null,
                Intent.payloadHash(payload), null, s);
        planFollowUp(s, tenant, queue, key, partition);
        // Both spellings of an instant the wire allows: UTC and Berlin's offset.
        boolean utc = r.nextBoolean();
        java.util.function.Function<Instant, String> time = t -> utc ? t.toString()
                : DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(t.atZone(SERIES_ZONE).toOffsetDateTime());
        if (r.nextBoolean()) {
            ObjectNode cmd = JSON.createObjectNode().put("op", op).put("queue", queue).put("timerKey", key)
                    .put("partition", partition);
            if (cron != null) {
                cmd.put("cron", cron).put("zone", zone.getId());
            } else {
                cmd.put("every", every.toString());
            }
            cmd.put("startAt", time.apply(startAt));
            if (s.endAt() != null) {
                cmd.put("endAt", time.apply(s.endAt()));
            }
            if (s.maxOccurrences() != null) {
                cmd.put("maxOccurrences", s.maxOccurrences());
            }
            cmd.put("catchUp", catchUp).put("txn", txn);
            cmd.set("payload", payload);
            return new GeneratedCommand(seq, intent, envelope(seq, topic, queue, key, cmd), null);
        }
        List<Header> headers = new ArrayList<>();
        headers.add(header("queen-op", op));
        headers.add(header("queen-queue", queue));
        headers.add(header("queen-timer-key", key));
        headers.add(header("queen-partition", partition));
        if (cron != null) {
            headers.add(header("queen-cron", cron));
            headers.add(header("queen-zone", zone.getId()));
        } else {
            headers.add(header("queen-every", every.toString()));
        }
        headers.add(header("queen-start-at", time.apply(startAt)));
        if (s.endAt() != null) {
            headers.add(header("queen-end-at", time.apply(s.endAt())));
        }
        if (s.maxOccurrences() != null) {
            headers.add(header("queen-max-occurrences", Integer.toString(s.maxOccurrences())));
        }
        headers.add(header("queen-catch-up", catchUp));
        headers.add(header("queen-txn", txn));
        return new GeneratedCommand(seq, intent, record(seq, topic, utf8(timerRecordKey(queue, key)), utf8(payload.toString()), headers), null);
    }

    private ObjectNode payload(SplittableRandom random, long seq, String key, boolean large) {
        ObjectNode p = JSON.createObjectNode().put("seq", seq).put("key", key).put("note", "äö ✓ \"quoted\"");
        int padLength = large ? 8_000 + random.nextInt(56_000) : random.nextInt(200);
        StringBuilder pad = new StringBuilder(padLength);
        for (int i = 0; i < padLength; i++) {
            pad.append((char) ('a' + random.nextInt(26)));
        }
        return p.put("pad", pad.toString());
    }

    private ProducerRecord<byte[], byte[]> headersForm(long seq, String topic, String queue, String key, String op, String txn,
                                                       ObjectNode payload, String partition, long delayMs) {
        List<Header> headers = new ArrayList<>();
        headers.add(header("queen-op", op));
        headers.add(header("queen-queue", queue));
        headers.add(header("queen-timer-key", key));
        if (txn != null) {
            headers.add(header("queen-partition", partition));
            headers.add(header("queen-delay-ms", Long.toString(delayMs)));
            headers.add(header("queen-txn", txn));
        }
        byte[] value = payload == null ? new byte[0] : payload.toString().getBytes(StandardCharsets.UTF_8);
        return record(seq, topic, utf8(timerRecordKey(queue, key)), value, headers);
    }

    /** A hostile record and the reason the bridge's parser must give it (docs/commands.md#reject-reasons-closed-list). */
    private record Hostile(String reason, ProducerRecord<byte[], byte[]> record) {
    }

    /**
     * Every reject reason, and records meant to hurt: each must get one {@code rejected} verdict with the reason
     * named here and stop nothing. Where a record breaks two rules the reason is the parser's first check
     * (fields in the order op, queue, timerKey, partition, txn, time, payload; the key last).
     */
    private Hostile hostile(long seq, String topic, String queue, String key) {
        byte[] k = utf8(timerRecordKey(queue, key));
        String base = "\"queue\":\"" + queue + "\",\"timerKey\":\"" + key + "\"";
        String schedule = "{\"op\":\"schedule\"," + base + ",\"delayMs\":100,\"txn\":\"h-" + seq + "\",\"payload\":{}";
        return switch (random.nextInt(22)) {
            case 0 -> new Hostile("malformed_json", record(seq, topic, k, utf8("{not json"), List.of()));
            case 1 -> new Hostile("malformed_json", record(seq, topic, k, new byte[] {'{', (byte) 0xC3, 0x28, '}'}, List.of()));
            case 2 -> new Hostile("malformed_json", record(seq, topic, k, null, List.of()));
            case 3 -> new Hostile("key_mismatch", record(seq, topic, utf8(queue + "/someone-else"), utf8(schedule + "}"), List.of()));
            case 4 -> new Hostile("key_mismatch", record(seq, topic, null, utf8(schedule + "}"), List.of()));
            case 5 -> new Hostile("bad_queue", record(seq, topic, utf8("bad queue!/" + key),
                    utf8("{\"op\":\"schedule\",\"queue\":\"bad queue!\",\"timerKey\":\"" + key + "\",\"delayMs\":1,\"txn\":\"x\",\"payload\":1}"), List.of()));
            // A producer trying to write for the other tenant.
            case 6 -> new Hostile("server_owned_field", record(seq, topic, k, utf8(schedule + ",\"tenant\":\"" + Stack.TENANT_B + "\"}"), List.of()));
            case 7 -> new Hostile("unknown_op", record(seq, topic, k, utf8("{\"op\":\"explode\"," + base + "}"), List.of()));
            case 8 -> new Hostile("wrong_type", record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":\"100\",\"txn\":\"x\",\"payload\":{}}"), List.of()));
            case 9 -> new Hostile("malformed_json", record(seq, topic, k, utf8("{\"op\":\"schedule\",\"op\":\"cancel\"," + base + "}"), List.of()));
            case 10 -> new Hostile("malformed_json", record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":1,\"txn\":\"x\",\"payload\":"
                    + "[".repeat(5_000) + "]".repeat(5_000) + "}"), List.of()));
            case 11 -> new Hostile("bad_txn", record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":1,\"txn\":\"a\\u0000b\",\"payload\":{}}"), List.of()));
            case 12 -> new Hostile("bad_time", record(seq, topic, k, utf8(schedule + ",\"deliverAt\":\"2030-01-01T00:00:00Z\"}"), List.of()));
            case 13 -> new Hostile("horizon", record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":17280000000,\"txn\":\"x\",\"payload\":{}}"), List.of()));
            case 14 -> new Hostile("payload_too_large", record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":1,\"txn\":\"x\",\"payload\":\""
                    + "z".repeat(Stack.PAYLOAD_MAX_BYTES + 10) + "\"}"), List.of()));
            case 15 -> new Hostile("bad_header", record(seq, topic, k, utf8("{}"), List.of(header("queen-op", "schedule"), header("queen-op", "cancel"),
                    header("queen-queue", queue), header("queen-timer-key", key))));
            case 16 -> {
                String longKey = "k".repeat(600);
                yield new Hostile("bad_timer_key", record(seq, topic, utf8(timerRecordKey(queue, longKey)), utf8("{\"op\":\"cancel\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + longKey + "\"}"), List.of()));
            }
            case 17 -> new Hostile("bad_timer_key", record(seq, topic, k, utf8("{\"op\":\"cancel\",\"queue\":\"" + queue + "\",\"timerKey\":\"\\ud800\"}"), List.of()));
            case 18 -> new Hostile("unknown_field", record(seq, topic, k, utf8("{\"op\":\"cancel\"," + base + ",\"txn\":\"x\"}"), List.of()));
            case 19 -> new Hostile("malformed_json", record(seq, topic, k, utf8("[1,2,3]"), List.of()));
            case 20 -> new Hostile("bad_time", record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":123456789012345678901234567890,\"txn\":\"x\",\"payload\":{}}"), List.of()));
            default -> new Hostile("bad_time", record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"deliverAt\":\"yesterday\",\"txn\":\"x\",\"payload\":{}}"), List.of()));
        };
    }

    private static ProducerRecord<byte[], byte[]> envelope(long seq, String topic, String queue, String key, ObjectNode cmd) {
        return record(seq, topic, utf8(timerRecordKey(queue, key)), utf8(cmd.toString()), List.of());
    }

    private static ProducerRecord<byte[], byte[]> record(long seq, String topic, byte[] key, byte[] value, List<Header> headers) {
        List<Header> all = new ArrayList<>(headers);
        all.add(header(SEQ_HEADER, Long.toString(seq)));
        return new ProducerRecord<>(topic, null, key, value, all);
    }

    /** A command record's key: {@code <queue>/<timerKey>} (docs/commands.md, the key rule). */
    static String timerRecordKey(String queue, String timerKey) {
        return queue + "/" + timerKey;
    }

    private static Header header(String name, String value) {
        return new RecordHeader(name, utf8(value));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
