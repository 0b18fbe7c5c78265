package io.queen.timers.faults.check;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.faults.decode.DecodedFrame;
import io.queen.timers.faults.load.Intent;
import io.queen.timers.faults.load.Series;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The checks of recurring series (issue 28, docs/recurring.md): each series the generator sent (catchUp {@code all},
 * on a key of its own) must deliver each of its occurrences O1..On exactly once, not before Oi, as a frame whose txn
 * is {@code <series txn>@Oi}, with one {@code fired} event whose {@code occurrence}, {@code seq} and {@code next} are
 * Oi, i and O(i+1) (null after On); nothing off the rule, nothing skipped or dead-lettered. The occurrences are the
 * generator's arithmetic ({@link Series}), never the product's reading of the rule. A series is told apart from a
 * one-shot timer by its txn ({@code @} and a series' txn before it), or by the message id its verdict announced.
 */
final class RecurringCheck {

    static final String LOST = "recurring: occurrences lost";
    static final String DOUBLED = "recurring: occurrences doubled";
    static final String OFF_RULE = "recurring: fires off the rule";
    static final String EARLY = "recurring: occurrences early";
    static final String EVENTS_WRONG = "recurring: fired events wrong";
    static final String SKIPPED = "recurring: occurrences skipped or dead-lettered";
    static final String WRONG_CONTENT = "recurring: fired with another payload or partition than the series";
    static final String SHARED_ID = "recurring: occurrences sharing a message id";
    static final String LATE = "recurring: occurrences late (beyond the declared bound)";
    static final List<String> KINDS = List.of(LOST, DOUBLED, OFF_RULE, EARLY, EVENTS_WRONG, SKIPPED, WRONG_CONTENT, SHARED_ID, LATE);

    private static final int EXAMPLE_SERIES = 3;

    /** A frame of a series as decoded from the log. */
    private record SeenFire(int tenant, String queue, String partition, Instant createdAt, UUID messageId, long payloadHash, String where) {
    }

    /** An event of an occurrence from an audit topic: {@code next} is kept as a node, so a missing field differs from null. */
    private record OccurrenceEvent(int tenant, String type, String eventId, String txn, String messageId, String occurrence,
                                   JsonNode seq, JsonNode next) {
    }

    private static final class State {
        final Checker.Cmd cmd;
        final Series series;
        final UUID firstMessageId;
        /** The eventId of the series' scheduled verdict: the harness's read of it starts the first occurrences' lateness. */
        final String stagedBy;
        final Map<String, List<SeenFire>> fires = new LinkedHashMap<>();
        /** Fired events by occurrence txn, then by eventId (copies of one event are one event: at-least-once). */
        final Map<String, Map<String, OccurrenceEvent>> fired = new HashMap<>();
        final List<OccurrenceEvent> otherEvents = new ArrayList<>();
        boolean violated;

        State(Checker.Cmd cmd, UUID firstMessageId, String stagedBy) {
            this.cmd = cmd;
            this.series = cmd.intent().series();
            this.firstMessageId = firstMessageId;
            this.stagedBy = stagedBy;
        }

        String name() {
            Intent in = cmd.intent();
            return "series " + series.txn() + " (tenant " + (in.tenant() == 0 ? "A" : "B") + " " + in.queue() + "/" + in.key() + ", " + series.rule() + ")";
        }
    }

    private final Findings f;
    private final Lateness late;
    private final Map<String, State> byTxn = new LinkedHashMap<>();
    private final Map<UUID, State> byFirstMessage = new HashMap<>();
    private final List<OccurrenceEvent> events = new ArrayList<>();
    private final List<Long> lateness = new ArrayList<>();

    RecurringCheck(Findings f, Lateness late) {
        this.f = f;
        this.late = late;
        KINDS.forEach(f::declare);
    }

    /** An audit event that belongs here: it names an occurrence, is a {@code skipped}, or carries an occurrence's txn. */
    static boolean isOccurrenceEvent(JsonNode ev) {
        return ev.has("occurrence") || "skipped".equals(ev.path("type").asText()) || ev.path("txn").asText("").contains("@");
    }

    void event(int tenant, JsonNode ev) {
        events.add(new OccurrenceEvent(tenant, ev.path("type").asText(), ev.path("eventId").asText(), ev.path("txn").asText(null),
                ev.path("messageId").asText(null), ev.path("occurrence").asText(null), ev.get("seq"), ev.get("next")));
    }

    /**
     * The verdict of a series' command. Its key is its own, so only {@code scheduled} is allowed; it must announce the
     * first occurrence (deliverAt O1) and the command's partition, and its txn is the series' or O1's.
     */
    void verdict(Checker.Cmd c, String id, Checker.Verdict v) {
        Series s = c.intent().series();
        Instant first = s.occurrences().get(0);
        String at = id + " (seq " + c.seq() + ", " + s.rule() + ") answered " + v.type();
        if (!"scheduled".equals(v.type())) {
            f.violation("verdicts the semantics do not allow", at + ": a series on a key of its own must be scheduled");
            return;
        }
        if (v.messageId() == null) {
            f.violation("inconsistent verdicts", at + " without a messageId");
            return;
        }
        if (!s.txn().equals(v.txn()) && !WireFormat.occurrenceTxn(s.txn(), first).equals(v.txn())
                || !c.intent().partition().equals(v.partition())) {
            f.violation("inconsistent verdicts", at + ": txn " + v.txn() + " partition " + v.partition() + ", the series' are " + s.txn()
                    + " (or " + WireFormat.occurrenceTxn(s.txn(), first) + ") " + c.intent().partition());
        }
        if (v.deliverAt() == null || !OffsetDateTime.parse(v.deliverAt()).toInstant().equals(first)) {
            f.violation("verdict time is not the command's own time", at + ": deliverAt " + v.deliverAt() + ", the first occurrence is " + first);
        }
        State st = new State(c, UUID.fromString(v.messageId()), v.eventId());
        byTxn.put(s.txn(), st);
        byFirstMessage.put(st.firstMessageId, st);
    }

    /** A frame of the log; false when it is not a series' (the one-shot checks take it). */
    boolean fire(int tenant, String queue, String partition, Instant createdAt, DecodedFrame frame, long payloadHash, String where) {
        State st = seriesOf(frame.txn());
        if (st == null) {
            st = byFirstMessage.get(frame.messageId());
        }
        if (st == null) {
            return false;
        }
        st.fires.computeIfAbsent(frame.txn(), k -> new ArrayList<>())
                .add(new SeenFire(tenant, queue, partition, createdAt, frame.messageId(), payloadHash, where));
        return true;
    }

    /** A DLQ row; false when it is not a series' occurrence. A healthy series' occurrence is never dead-lettered. */
    boolean dlqRow(UUID messageId, String txn, String where) {
        State st = seriesOf(txn);
        if (st == null) {
            st = byFirstMessage.get(messageId);
        }
        if (st == null) {
            return false;
        }
        violation(st, SKIPPED, st.name() + ": " + where);
        return true;
    }

    private State seriesOf(String txn) {
        int at = txn == null ? -1 : txn.indexOf('@');
        return at < 0 ? null : byTxn.get(txn.substring(0, at));
    }

    void judge() {
        for (OccurrenceEvent e : events) {
            State st = seriesOf(e.txn());
            if (st == null && e.messageId() != null) {
                try {
                    st = byFirstMessage.get(UUID.fromString(e.messageId()));
                } catch (IllegalArgumentException notAnId) {
                    st = null;
                }
            }
            if (st == null) {
                f.violation("unknown messages in the log", e.type() + " event of occurrence txn " + e.txn() + " message " + e.messageId()
                        + " on the audit topic of tenant " + e.tenant() + ", which no series' verdict announced");
            } else if ("fired".equals(e.type())) {
                st.fired.computeIfAbsent(e.txn(), k -> new LinkedHashMap<>()).putIfAbsent(e.eventId(), e);
            } else {
                st.otherEvents.add(e);
            }
        }
        long expected = 0;
        long delivered = 0;
        for (State st : byTxn.values()) {
            expected += st.series.occurrences().size();
            delivered += st.fires.values().stream().mapToLong(List::size).sum();
            judge(st);
        }
        f.fact("recurring series (scheduled verdicts)", byTxn.size());
        f.fact("recurring occurrences expected", expected);
        f.fact("recurring occurrences fired (frames in the log)", delivered);
        lateness.sort(null);
        f.fact("recurring lateness max ms", lateness.isEmpty() ? 0 : lateness.get(lateness.size() - 1));
        List<State> shown = new ArrayList<>(byTxn.values().stream().filter(s -> s.violated).limit(EXAMPLE_SERIES).toList());
        // Clean ones of both rule kinds too: the report shows what a passing series looks like.
        for (boolean cron : new boolean[] {false, true}) {
            byTxn.values().stream().filter(s -> !s.violated && (s.series.cron() != null) == cron).findFirst()
                    .filter(s -> shown.size() < EXAMPLE_SERIES).ifPresent(shown::add);
        }
        for (int i = 0; i < shown.size(); i++) {
            f.fact("recurring example " + (i + 1), example(shown.get(i)));
        }
    }

    private void judge(State st) {
        Series s = st.series;
        String name = st.name();
        Set<String> expectedTxns = s.occurrences().stream().map(o -> WireFormat.occurrenceTxn(s.txn(), o)).collect(Collectors.toSet());
        Map<UUID, String> ids = new HashMap<>();
        for (int i = 0; i < s.occurrences().size(); i++) {
            Instant o = s.occurrences().get(i);
            String txn = WireFormat.occurrenceTxn(s.txn(), o);
            String at = name + " occurrence " + (i + 1) + " " + o + ": expected " + times(s.occurrences()) + ", seen " + seen(st);
            List<SeenFire> fs = st.fires.getOrDefault(txn, List.of());
            if (fs.isEmpty()) {
                violation(st, LOST, at);
            }
            for (int k = 1; k < fs.size(); k++) {
                violation(st, DOUBLED, at + " delivered " + fs.size() + " times (" + fs.stream().map(SeenFire::where).toList() + ")");
            }
            for (SeenFire sf : fs) {
                if (sf.createdAt().isBefore(o)) {
                    violation(st, EARLY, at + ": created_at " + sf.createdAt() + " at " + sf.where());
                } else {
                    lateness.add(sf.createdAt().toEpochMilli() - o.toEpochMilli());
                }
                if (sf.tenant() != st.cmd.tenant() || !sf.queue().equals(st.cmd.intent().queue())) {
                    violation(st, "tenant crossings", at + ": in " + sf.where());
                }
                if (!sf.partition().equals(st.cmd.intent().partition()) || sf.payloadHash() != st.cmd.intent().payloadHash()) {
                    violation(st, WRONG_CONTENT, at + ": " + sf.where() + ", the series' partition is " + st.cmd.intent().partition());
                }
                String other = ids.putIfAbsent(sf.messageId(), txn);
                if (other != null && !other.equals(txn)) {
                    violation(st, SHARED_ID, at + ": message " + sf.messageId() + " also delivered " + other);
                }
            }
            if (i == 0 && !fs.isEmpty() && !fs.get(0).messageId().equals(st.firstMessageId)) {
                violation(st, "inconsistent verdicts", at + ": delivered as message " + fs.get(0).messageId() + ", the verdict announced "
                        + st.firstMessageId);
            }
            firedEvent(st, i, txn, fs, at);
        }
        for (Map.Entry<String, List<SeenFire>> e : st.fires.entrySet()) {
            if (!expectedTxns.contains(e.getKey())) {
                for (SeenFire sf : e.getValue()) {
                    violation(st, OFF_RULE, name + ": txn " + e.getKey() + " at " + sf.where() + "; expected " + times(s.occurrences()));
                }
            }
        }
        for (String txn : st.fired.keySet()) {
            if (!expectedTxns.contains(txn) && !st.fires.containsKey(txn)) {
                violation(st, EVENTS_WRONG, name + ": a fired event of " + txn + ", an occurrence neither expected nor in the log");
            }
        }
        for (OccurrenceEvent e : st.otherEvents) {
            violation(st, SKIPPED, name + ": " + e.type() + " event of " + e.txn() + " (occurrence " + e.occurrence() + ")");
        }
    }

    /** Exactly one fired event (by eventId) per delivered occurrence, naming Oi, i and O(i+1) or null. */
    private void firedEvent(State st, int i, String txn, List<SeenFire> fs, String at) {
        Map<String, OccurrenceEvent> evs = st.fired.getOrDefault(txn, Map.of());
        if (fs.isEmpty()) {
            return; // lost already; an event without its frame is not a second finding
        }
        if (evs.size() != 1) {
            violation(st, EVENTS_WRONG, at + ": " + evs.size() + " fired events (distinct eventIds), expected 1");
        }
        Instant next = st.series.expectedNext(i);
        if (!evs.isEmpty()) {
            // From Oi, or from the log watch's first sight of the occurrence staged if later, to its first sight of its frame.
            late.fire(LATE, at, st.series.occurrences().get(i).toEpochMilli(), st.stagedBy, fs.get(0).messageId(), txn,
                    evs.keySet().iterator().next(), 0);
        }
        for (OccurrenceEvent e : evs.values()) {
            List<String> wrong = new ArrayList<>();
            if (!instant(e.occurrence(), st.series.occurrences().get(i))) {
                wrong.add("occurrence " + e.occurrence());
            }
            if (e.seq() == null || !e.seq().canConvertToInt() || e.seq().asInt() != i + 1) {
                wrong.add("seq " + e.seq() + " (expected " + (i + 1) + ")");
            }
            if (e.next() == null) {
                wrong.add("no next (expected " + next + ")");
            } else if (next == null ? !e.next().isNull() : e.next().isNull() || !instant(e.next().asText(), next)) {
                wrong.add("next " + e.next() + " (expected " + next + ")");
            }
            if (fs.stream().noneMatch(sf -> sf.messageId().toString().equals(e.messageId()))) {
                wrong.add("messageId " + e.messageId() + " is not the delivered message's");
            }
            if (!wrong.isEmpty()) {
                violation(st, EVENTS_WRONG, at + ": fired event " + e.eventId() + " has " + String.join(", ", wrong));
            }
        }
    }

    private void violation(State st, String kind, String example) {
        st.violated = true;
        f.violation(kind, example);
    }

    private static boolean instant(String text, Instant expected) {
        if (text == null) {
            return false;
        }
        try {
            return OffsetDateTime.parse(text).toInstant().equals(expected);
        } catch (RuntimeException e) {
            try {
                return Instant.parse(text).equals(expected);
            } catch (RuntimeException e2) {
                return false;
            }
        }
    }

    private static String example(State st) {
        return st.name() + ": expected " + times(st.series.occurrences()) + ", seen " + seen(st);
    }

    /** The occurrences' UTC times of day (the date is the run's): short enough for a table row. */
    private static String times(List<Instant> instants) {
        return instants.stream().map(RecurringCheck::timeOfDay).collect(Collectors.joining(" ", "[", "]"));
    }

    private static String timeOfDay(Instant t) {
        return (t.getNano() == 0 ? SECONDS : MILLIS).format(t.atOffset(ZoneOffset.UTC));
    }

    private static final java.time.format.DateTimeFormatter SECONDS = java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss");
    private static final java.time.format.DateTimeFormatter MILLIS = java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    /** The delivered occurrences by txn, in log order of first sight, a doubled one marked x2. */
    private static String seen(State st) {
        return st.fires.entrySet().stream().map(e -> {
            String txn = e.getKey();
            int at = txn.indexOf('@');
            String t;
            try {
                t = timeOfDay(Instant.parse(txn.substring(at + 1)));
            } catch (RuntimeException notAnInstant) {
                t = txn;
            }
            return t + (e.getValue().size() > 1 ? " x" + e.getValue().size() : "");
        }).collect(Collectors.joining(" ", "[", "]"));
    }
}
