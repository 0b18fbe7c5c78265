package io.queen.timers.faults.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.faults.load.CommandGenerator;
import io.queen.timers.faults.load.CommandKind;
import io.queen.timers.faults.load.GeneratedCommand;
import io.queen.timers.faults.load.Intent;
import io.queen.timers.faults.load.Series;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.processes.stack.Stack;
import io.queen.timers.faults.decode.DecodedFrame;
import io.queen.timers.log.codec.UuidV7;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * A whole run without processes: the seeded generator's commands through a small model of the bridge and
 * the sweeper on a virtual clock, its verdicts, audit events, log frames and DLQ rows fed to the real
 * {@link Checker}. The model is correct unless a {@link Mutant} breaks one rule, as a defect in the
 * product would; the mutation test requires the checker to pass the first and fail every other.
 */
final class SimulatedRun {

    /** One way the product can be wrong; {@code NONE} is the product as specified. */
    enum Mutant {
        NONE,
        /** The bridge takes a delayMs command as due at the record's timestamp. */
        IGNORES_DELAY_MS,
        /** A cancel of a pending timer answers absent and leaves the timer, which fires later. */
        CANCEL_ABSENT_WHILE_LIVE,
        /** A sweeper fires after its claim expired and another sweeper fired the timer too (no token re-check). */
        FIRE_WITHOUT_TOKEN_RECHECK,
        /** A fire's segment is pushed twice (a retry after a commit whose answer was lost). */
        SEGMENT_PUSHED_TWICE,
        /** The bridge skips a record: no verdict, no effect. */
        RECORD_SKIPPED,
        /** A schedule of a pending timer answers cancelled and deletes it. */
        SCHEDULE_ANSWERED_CANCELLED,
        /** Every hostile record is rejected, but as malformed_json whatever it breaks. */
        WRONG_REJECT_REASON,
        /** A lost cancel: a cancel of a pending timer nobody claimed answers too_late and leaves it (it fires as if never cancelled). */
        LOST_CANCEL,
        /** A lost reschedule: a schedule of a pending timer nobody claimed answers too_late; the timer fires as first scheduled. */
        LOST_RESCHEDULE,
        /** The bridge is right, but its too_late verdicts carry no {@code at}: their time cannot be judged. */
        TOO_LATE_WITHOUT_AT,
        /** A reschedule moves the time but the fire carries the first schedule's txn and payload. */
        FIRES_FIRST_PAYLOAD,
        /** A command the producer failed to send is not in the topic (the checker must not judge less silently). */
        SEND_FAILED,
        /** Not a defect: a send the client reported failed although its record landed (judged like any other). */
        SEND_REPORTED_FAILED_BUT_LANDED,
        /**
         * A schedule of a timer whose message was just fired answers rescheduled, naming that message (the bridge read
         * the row as it was before the fire's delete), and stages it again: a verdict after the delivery.
         */
        RESCHEDULES_FIRED,
        /** A recurring series' fire stages the occurrence after the next one: an occurrence is never delivered. */
        OCCURRENCE_MISSING,
        /** An occurrence's segment is pushed twice. */
        OCCURRENCE_PUSHED_TWICE,
        /** The next occurrence is the fire's clock plus the rule's gap, not the rule's instant after the fired occurrence. */
        NEXT_FROM_NOW,
        /** The fired event of an occurrence counts seq from 0. */
        EVENT_SEQ_FROM_ZERO,
        /** An occurrence is claimed a second before its instant. */
        OCCURRENCE_EARLY,
        /** A series' successor occurrence gets a random (version 4) message id, as gen_random_uuid() mints one. */
        SUCCESSOR_ID_NOT_V7,
        /** One timer in twenty is fired minutes late: its fire commits 150 s after its claim (commands meanwhile: too_late). */
        FIRES_LATE,
        /** Some occurrences are claimed 150 s after their instant (catchUp all: those staged after them are late too). */
        OCCURRENCE_LATE,
        /** A cancel of a running series answers cancelled, naming its pending occurrence, and leaves it: the series goes on. */
        CANCELLED_SERIES_GOES_ON,
        /**
         * A sweeper whose clock is 30 s ahead plans by it: a series under catchUp one or none skips the occurrences of the
         * next 30 s at every fire, none of them due yet by the database's clock (docs/recurring.md plans at the sweeper's clock).
         */
        SKIPS_NOT_YET_DUE
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Records 5 ms apart over 10 keys: a timer gets a command every ~0.4 s, within the 0-3 s delays, so commands meet live timers. */
    private static final long STEP_MS = 5;
    /** How long a claimed timer is "firing" before its segment commits: commands in between are too_late. */
    private static final long FIRE_MS = 30;
    /** How late FIRES_LATE and OCCURRENCE_LATE are: minutes, past any bound the checker declares. */
    private static final long LATE_MS = 150_000;
    /** How long after its commit the harness's consumer reads an event (the audit watch polls; the relay publishes). */
    private static final long READ_MS = 3;
    /** How long after a fire the harness's log watch sees its frame (a poll). */
    private static final long SEEN_MS = 100;
    /** One command in 100 a recurring series: ~30 in a run, so each broken rule of series has occurrences to break. */
    static final double RECURRING_FRACTION = 0.01;

    /**
     * A staged timer; a series' occurrence has its rule, the occurrence's instant ({@code due}) and number (from 1).
     */
    private record Timer(UUID id, int tenant, String queue, String key, boolean poison, String txn, JsonNode payload,
                         String partition, long due, long claimedAt, Series series, int seq) {
        Timer claimed(long at) {
            return new Timer(id, tenant, queue, key, poison, txn, payload, partition, due, at, series, seq);
        }

        /** The occurrence {@code at} of the same series, number {@code n}: a new row, so a new message id. */
        Timer occurrence(Instant at, int n, UUID id) {
            return new Timer(id, tenant, queue, key, poison, WireFormat.occurrenceTxn(series.txn(), at), payload, partition,
                    at.toEpochMilli(), -1, series, n);
        }
    }

    private record LogFrame(int tenant, String queue, String partition, long offset, Instant createdAt, DecodedFrame frame) {
    }

    private final Mutant mutant;
    private final Checker checker;
    private final Map<String, Timer> timers = new TreeMap<>();
    private final Map<String, Long> kafkaOffsets = new HashMap<>();
    private final Map<String, Long> logOffsets = new HashMap<>();
    private final List<List<Object[]>> audit = List.of(new ArrayList<>(), new ArrayList<>());
    private final List<LogFrame> frames = new ArrayList<>();
    private final List<Object[]> dlq = new ArrayList<>();
    private int fires;
    private int seriesFires;
    private boolean skipped;
    /** The last fired message of each timer, and when (RESCHEDULES_FIRED answers for it shortly after). */
    private final Map<String, Timer> lastFired = new HashMap<>();
    private final Map<String, Long> lastFiredAt = new HashMap<>();
    /** Series whose occurrence in hands met a cancel: it goes out, and no successor is staged (docs/recurring.md). */
    private final Set<String> stoppedSeries = new java.util.HashSet<>();
    private final java.util.Random relay;
    /** When the harness's consumer first read each event, by eventId (the checker's lateness is judged on these). */
    private final Map<String, Long> readAt = new HashMap<>();
    private final Map<UUID, Long> seenAt = new HashMap<>();

    private SimulatedRun(Mutant mutant, Intent[] intents, Set<Long> failed, java.util.Random relay) {
        this.mutant = mutant;
        this.relay = relay;
        // CI's too_late window (the harness bridges' statement timeout plus clock slack), though the simulated bridge never
        // waits: a mutant must fail under the settings the real run is judged with, not only under a tighter simulated one.
        this.checker = new Checker(null, null, intents, failed, Checker.HARNESS_TOO_LATE_SLACK_MS);
    }

    /** What the checker found, and the verdict types the run gave (to show it met every branch of the semantics). */
    record Result(Findings findings, Map<String, Long> verdicts) {
    }

    /** Runs {@code n} seeded commands with {@code mutant} and returns what the checker found; no faults: all fault-free. */
    static Result run(long seed, int n, Mutant mutant) {
        return run(seed, n, mutant, false);
    }

    /**
     * As above; {@code underFaults}: the checker judges the run against a fault timeline of a 1 s outage every minute (each
     * with the recovery budget), as the harness judges a run with faults.
     */
    static Result run(long seed, int n, Mutant mutant, boolean underFaults) {
        // The generator draws its absolute times (deliverAt, a series' startAt) on the run's virtual clock, as the real
        // producer draws them just before it sends.
        long t0 = Instant.now().toEpochMilli();
        long[] generating = {0};
        CommandGenerator gen = new CommandGenerator(seed, 10, 0.05, 0.01, 0, RECURRING_FRACTION)
                .clock(() -> Instant.ofEpochMilli(t0 + generating[0] * STEP_MS));
        List<GeneratedCommand> cmds = new ArrayList<>();
        Intent[] intents = new Intent[n];
        for (int i = 0; i < n; i++) {
            generating[0] = i;
            GeneratedCommand c = gen.next(i);
            cmds.add(c);
            intents[i] = c.intent();
        }
        long sendFailed = mutant == Mutant.SEND_FAILED || mutant == Mutant.SEND_REPORTED_FAILED_BUT_LANDED ? n / 3 : -1;
        Set<Long> failed = sendFailed < 0 ? Set.of() : Set.of(sendFailed);
        SimulatedRun sim = new SimulatedRun(mutant, intents, failed, new java.util.Random(seed));
        long now = t0;
        for (GeneratedCommand c : cmds) {
            now = t0 + c.seq() * STEP_MS;
            sim.sweep(now);
            if (c.seq() != sendFailed || mutant == Mutant.SEND_REPORTED_FAILED_BUT_LANDED) {
                sim.apply(c, now);
            }
        }
        while (!sim.timers.isEmpty()) {
            now += 10;
            sim.sweep(now);
        }
        List<io.queen.timers.faults.inject.Outage> outages = new ArrayList<>();
        for (long t = t0; underFaults && t < now; t += 60_000) {
            outages.add(new io.queen.timers.faults.inject.Outage(io.queen.timers.faults.inject.FaultKind.PG_FAST, "postgres", t, t + 1_000));
        }
        sim.checker.observed(sim.readAt, sim.seenAt, java.util.Map.of(), FaultTimeline.of(outages, FaultTimeline.RECOVERY_MS), 0);
        return new Result(sim.judge(), sim.verdictTypes());
    }

    private void apply(GeneratedCommand g, long ts) {
        Intent in = g.intent();
        String topicKey = in.tenant() + "/" + Math.floorMod((in.queue() + "/" + in.key()).hashCode(), 6);
        long offset = kafkaOffsets.merge(topicKey, 1L, Long::sum) - 1;
        int partition = Integer.parseInt(topicKey.substring(topicKey.indexOf('/') + 1));
        checker.command(new Checker.Cmd(in.tenant(), partition, offset, ts, g.seq(), in));
        String id = Checker.id(in.tenant(), partition, offset);
        long at = ts + 2;
        if (in.kind() == CommandKind.HOSTILE) {
            verdict(id, in, at, "rejected", null).put("reason", mutant == Mutant.WRONG_REJECT_REASON ? "malformed_json" : in.rejectReason());
            return;
        }
        if (mutant == Mutant.RECORD_SKIPPED && !skipped && g.seq() > 1000 && !in.cancel()) {
            skipped = true;
            return;
        }
        String timer = in.tenant() + "/" + in.queue() + "/" + in.key();
        Timer t = timers.get(timer);
        boolean firing = t != null && t.claimedAt >= 0;
        if (in.recurring()) {
            // A series' key: a series, or a reschedule to a new rule. A live occurrence in hands answers too_late (nothing
            // changes); a pending one is rescheduled, its message taking the new rule's first occurrence; else scheduled.
            if (firing) {
                tooLate(id, in, at, t.id);
                return;
            }
            Instant first = in.series().occurrences().get(0);
            Timer row = new Timer(null, in.tenant(), in.queue(), in.key(), false, null, payload(g), in.partition(), 0, -1, in.series(), 0)
                    .occurrence(first, 1, t != null ? t.id : UuidV7.next());
            timers.put(timer, row);
            verdict(id, in, at, t != null ? "rescheduled" : "scheduled", row.id).put("txn", row.txn).put("partition", in.partition())
                    .put("deliverAt", first.toString());
            return;
        }
        if (in.cancel()) {
            if (t == null) {
                verdict(id, in, at, "absent", null);
            } else if (firing || mutant == Mutant.LOST_CANCEL) {
                tooLate(id, in, at, t.id);
                if (t.series != null && firing) {
                    stoppedSeries.add(timer); // the occurrence in hands goes out, no successor follows
                }
            } else if (mutant == Mutant.CANCEL_ABSENT_WHILE_LIVE) {
                verdict(id, in, at, "absent", null);
            } else if (mutant == Mutant.CANCELLED_SERIES_GOES_ON && t.series != null) {
                verdict(id, in, at, "cancelled", t.id);
            } else {
                verdict(id, in, at, "cancelled", t.id);
                timers.remove(timer);
            }
            return;
        }
        if (firing || (t != null && mutant == Mutant.LOST_RESCHEDULE)) {
            tooLate(id, in, at, t.id);
            return;
        }
        if (t == null && mutant == Mutant.RESCHEDULES_FIRED && lastFired.containsKey(timer) && at - lastFiredAt.get(timer) < 200) {
            t = lastFired.remove(timer); // the fired message, as if its row were still staged
        }
        if (t != null && mutant == Mutant.SCHEDULE_ANSWERED_CANCELLED) {
            verdict(id, in, at, "cancelled", t.id);
            timers.remove(timer);
            return;
        }
        long due = in.deliverAt() != null ? in.deliverAt().toEpochMilli() : ts + (mutant == Mutant.IGNORES_DELAY_MS ? 0 : in.delayMs());
        JsonNode payload = payload(g);
        UUID mid = t == null ? UuidV7.next() : t.id;
        boolean keepFirst = t != null && mutant == Mutant.FIRES_FIRST_PAYLOAD;
        timers.put(timer, new Timer(mid, in.tenant(), in.queue(), in.key(), in.kind() == CommandKind.POISON,
                keepFirst ? t.txn : in.txn(), keepFirst ? t.payload : payload, in.partition(), due, -1, null, 0));
        verdict(id, in, at, t == null ? "scheduled" : "rescheduled", mid).put("txn", in.txn()).put("partition", in.partition())
                .put("deliverAt", Instant.ofEpochMilli(due).toString());
    }

    /** Claims what is due, and fires (or dead-letters) what was claimed FIRE_MS ago. */
    private void sweep(long now) {
        List<Timer> done = new ArrayList<>();
        for (Map.Entry<String, Timer> e : timers.entrySet()) {
            Timer t = e.getValue();
            if (t.claimedAt >= 0 && now >= t.claimedAt + FIRE_MS + (mutant == Mutant.FIRES_LATE && late(t) ? LATE_MS : 0)) {
                done.add(t);
            } else if (t.claimedAt < 0 && t.due <= now + (mutant == Mutant.OCCURRENCE_EARLY && t.series != null ? 1_000 : 0)
                    - (mutant == Mutant.OCCURRENCE_LATE && t.series != null && t.seq == 2 ? LATE_MS : 0)) {
                e.setValue(t.claimed(now));
            }
        }
        for (Timer t : done) {
            timers.remove(t.tenant + "/" + t.queue + "/" + t.key);
            if (t.series != null) {
                fireOccurrence(t, now);
                continue;
            }
            if (t.poison) {
                dlq.add(new Object[] {t.id, t.txn, t.tenant == 0 ? Stack.TENANT_A : Stack.TENANT_B, t.queue});
                outcome(t, "dead_lettered", now);
                continue;
            }
            fires++;
            lastFired.put(t.tenant + "/" + t.queue + "/" + t.key, t);
            lastFiredAt.put(t.tenant + "/" + t.queue + "/" + t.key, now);
            push(t, now);
            if ((mutant == Mutant.FIRE_WITHOUT_TOKEN_RECHECK || mutant == Mutant.SEGMENT_PUSHED_TWICE) && fires % 10 == 0) {
                // the second claimant's fire (lease expired), or the same segment again
                push(t, mutant == Mutant.SEGMENT_PUSHED_TWICE ? now : now + 3_000);
            }
            outcome(t, "fired", now);
        }
    }

    /**
     * The fire of an occurrence (docs/recurring.md, catchUp all): push it, then stage the rule's next occurrence after it
     * under the same key in the same step, unless the series ended (maxOccurrences reached, or past endAt).
     */
    private void fireOccurrence(Timer t, long now) {
        Series s = t.series;
        Instant o = Instant.ofEpochMilli(t.due);
        seriesFires++;
        boolean broken = seriesFires % 7 == 3; // some occurrences, in several series, meet the mutant
        push(t, now);
        if (mutant == Mutant.OCCURRENCE_PUSHED_TWICE && broken) {
            push(t, now);
        }
        Instant next = s.nextAfter(o);
        Instant skippedTo = null;
        if (mutant == Mutant.SKIPS_NOT_YET_DUE && !"all".equals(s.catchUp())) {
            // catchUp one's plan at a clock 30 s ahead: every occurrence up to then counts as missed
            Instant clock = Instant.ofEpochMilli(now + 30_000);
            if (!next.isAfter(clock)) {
                skippedTo = s.atOrBefore(clock);
            }
        }
        Instant skippedFrom = skippedTo == null ? null : next;
        if (skippedTo != null) {
            next = s.nextAfter(skippedTo);
        }
        if (mutant == Mutant.OCCURRENCE_MISSING && broken) {
            next = s.nextAfter(next);
        } else if (mutant == Mutant.NEXT_FROM_NOW) {
            next = Instant.ofEpochMilli(now).plus(java.time.Duration.between(o, next));
        }
        boolean stopped = stoppedSeries.remove(t.tenant + "/" + t.queue + "/" + t.key);
        boolean byCount = s.maxOccurrences() != null && t.seq >= s.maxOccurrences();
        boolean ended = byCount || (s.endAt() != null && next.isAfter(s.endAt())) || stopped;
        ObjectNode ev = JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", "fired")
                .put("messageId", t.id.toString()).put("txn", t.txn).put("occurrence", o.toString())
                .put("seq", mutant == Mutant.EVENT_SEQ_FROM_ZERO ? t.seq - 1 : t.seq);
        if (skippedTo != null) {
            ev.putObject("skipped").put("from", skippedFrom.toString()).put("to", skippedTo.toString());
        }
        if (ended) {
            ev.putNull("next").put("ended", stopped ? "cancelled" : byCount ? "max_occurrences" : "end_at");
        } else {
            ev.put("next", next.toString());
            timers.put(t.tenant + "/" + t.queue + "/" + t.key, t.occurrence(next, t.seq + 1,
                    mutant == Mutant.SUCCESSOR_ID_NOT_V7 ? UUID.randomUUID() : UuidV7.next()));
        }
        readAt.put(ev.path("eventId").asText(), now + READ_MS);
        audit.get(t.tenant).add(new Object[] {null, ev});
    }

    /** One timer in twenty, by its id. */
    private static boolean late(Timer t) {
        return t.series == null && Math.floorMod(t.id.getLeastSignificantBits(), 20) == 0;
    }

    private void push(Timer t, long at) {
        String log = t.tenant + "/" + t.queue + "/" + t.partition;
        long offset = logOffsets.merge(log, 1L, Long::sum) - 1;
        byte[] payload = t.payload.toString().getBytes(StandardCharsets.UTF_8);
        frames.add(new LogFrame(t.tenant, t.queue, t.partition, offset, Instant.ofEpochMilli(at), DecodedFrame.of(t.id, t.txn, payload)));
        seenAt.putIfAbsent(t.id, at + SEEN_MS); // the log watch's poll
    }

    private void tooLate(String id, Intent in, long at, UUID inHands) {
        ObjectNode ev = verdict(id, in, at, "too_late", inHands);
        if (mutant == Mutant.TOO_LATE_WITHOUT_AT) {
            ev.remove("at");
        }
    }

    private ObjectNode verdict(String id, Intent in, long at, String type, UUID mid) {
        ObjectNode ev = JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", type)
                .put("tenant", in.tenant() == 0 ? Stack.TENANT_A : Stack.TENANT_B).put("at", Instant.ofEpochMilli(at).toString());
        readAt.put(ev.path("eventId").asText(), at + READ_MS);
        if (mid != null) {
            ev.put("messageId", mid.toString());
        }
        audit.get(in.tenant()).add(new Object[] {id, ev});
        return ev;
    }

    private void outcome(Timer t, String type, long now) {
        ObjectNode ev = JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", type)
                .put("messageId", t.id.toString());
        readAt.put(ev.path("eventId").asText(), now + READ_MS);
        audit.get(t.tenant).add(new Object[] {null, ev});
    }

    private static JsonNode payload(GeneratedCommand g) {
        try {
            byte[] value = g.record().value();
            return g.record().headers().lastHeader("queen-op") != null ? JSON.readTree(value) : JSON.readTree(value).get("payload");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The relay: publishes each tenant's outbox (the events in commit order) as the real one does, in rounds of the
     * oldest rows, in batches; about one round in eight fails part-way: each batch of it lands or is lost (expired),
     * independently (a later batch of a partition can land after an earlier one was lost: the producer bumps its
     * epoch), and the whole round is published again. The topic thus holds repeats, and first copies out of the
     * outbox's order, as a real run's audit topic can.
     */
    private List<Object[]> publish(List<Object[]> outbox) {
        List<Object[]> topic = new ArrayList<>(outbox.size() * 2);
        int oldest = 0;
        while (oldest < outbox.size()) {
            int end = Math.min(outbox.size(), oldest + 5 + relay.nextInt(40));
            boolean fails = relay.nextInt(8) == 0;
            for (int b = oldest; b < end; ) {
                int batchEnd = Math.min(end, b + 1 + relay.nextInt(6));
                if (!fails || relay.nextBoolean()) {
                    topic.addAll(outbox.subList(b, batchEnd));
                }
                b = batchEnd;
            }
            if (!fails) {
                oldest = end;
            }
        }
        return topic;
    }

    /** In the checker's order: the command records, the audit topics, the replay, the log, the DLQ, each message. */
    private Findings judge() {
        for (int tenant = 0; tenant < 2; tenant++) {
            List<Object[]> events = publish(audit.get(tenant));
            for (int i = 0; i < events.size(); i++) {
                Checker.Pos pos = new Checker.Pos(0, i);
                if (events.get(i)[0] != null) {
                    checker.verdict((String) events.get(i)[0], (JsonNode) events.get(i)[1], pos);
                } else {
                    checker.outcomeEvent(tenant, (JsonNode) events.get(i)[1], pos);
                }
            }
        }
        checker.landed();
        checker.checkVerdictsAndBuildMessages();
        for (LogFrame lf : frames) {
            checker.fire(lf.tenant, lf.queue, lf.partition, lf.offset, lf.createdAt, lf.frame, "simulated log");
        }
        for (Object[] d : dlq) {
            checker.dlqRow((UUID) d[0], (String) d[1], (String) d[2], (String) d[3]);
        }
        checker.judgeMessages();
        return checker.findings();
    }

    private Map<String, Long> verdictTypes() {
        Map<String, Long> m = new LinkedHashMap<>();
        audit.forEach(l -> l.forEach(e -> m.merge(((JsonNode) e[1]).path("type").asText(), 1L, Long::sum)));
        return m;
    }
}
