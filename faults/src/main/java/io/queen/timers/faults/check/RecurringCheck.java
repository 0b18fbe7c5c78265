package io.queen.timers.faults.check;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.faults.decode.DecodedFrame;
import io.queen.timers.faults.load.Intent;
import io.queen.timers.faults.load.Series;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The checks of recurring series (docs/recurring.md; docs/fault-harness.md "Recurring series"). Each key the generator
 * gave a series ({@code rec-<seq>}) gets its commands in offset order: the series, then maybe a cancel or a reschedule to
 * a new rule. Each rule on a key is an <b>epoch</b>, from the verdict that staged it to the verdict that ended it (a
 * cancel's, a reschedule's) or its own end. An epoch is walked occurrence by occurrence, from O1, with the rule's
 * arithmetic ({@link Series}, never the product's {@code Recurrence}):
 *
 * <ul>
 *   <li>each occurrence is delivered once (a frame whose txn is {@code <series txn>@<instant>}, docs/formats.md), or, under
 *       catchUp {@code none}, skipped with a {@code skipped} event; never both, never twice, none left out;</li>
 *   <li>a delivered occurrence's {@code fired} event names it, its number among the deliveries ({@code seq}) and the next
 *       one; a skip (catchUp {@code one} or {@code none}) names a range of occurrences that were all due when the
 *       database stamped the event (its {@code at}, the fire's transaction), the next occurrence after them was not, and
 *       catchUp {@code all} never skips (fewer than 100 missed here); an occurrence whose successor was already due at the
 *       fire, under {@code one} or {@code none}, must skip it: the policy's skips, and no others;</li>
 *   <li>after a cancel answered {@code cancelled} or a reschedule answered {@code rescheduled}, naming message M: M never
 *       fires in the epoch, and nothing of the epoch is stamped later than the verdict's time plus the bridge's
 *       {@code too_late} slack; after a cancel answered {@code too_late} (M in a sweeper's hands): M fires and is the last;
 *       {@code absent}, or a new series {@code scheduled} on the key, only once the epoch had ended on its own.</li>
 * </ul>
 *
 * Frames and events belong to an epoch by their txn ({@code <series txn>@...}), or by the message id its verdict announced.
 */
final class RecurringCheck {

    static final String LOST = "recurring: occurrences lost";
    static final String DOUBLED = "recurring: occurrences doubled";
    static final String OFF_RULE = "recurring: fires off the rule";
    static final String EARLY = "recurring: occurrences early";
    static final String EVENTS_WRONG = "recurring: fired events wrong";
    static final String POLICY = "recurring: skips the catch-up policy does not allow";
    static final String DEAD_LETTERED = "recurring: occurrences dead-lettered";
    static final String AFTER_END = "recurring: occurrences after a cancel or reschedule ended the series";
    static final String WRONG_CONTENT = "recurring: fired with another payload or partition than the series";
    static final String SHARED_ID = "recurring: occurrences sharing a message id";
    static final String LATE = "recurring: occurrences late from their instant (beyond the bound the faults allow)";
    static final List<String> KINDS = List.of(LOST, DOUBLED, OFF_RULE, EARLY, EVENTS_WRONG, POLICY, DEAD_LETTERED, AFTER_END, WRONG_CONTENT,
            SHARED_ID, LATE);

    private static final int EXAMPLE_SERIES = 3;

    /** A frame of a series as decoded from the log. */
    private record SeenFire(int tenant, String queue, String partition, Instant createdAt, UUID messageId, long payloadHash, String where) {
    }

    /** An event of an occurrence from an audit topic: {@code next} is kept as a node, so a missing field differs from null. */
    private record OccurrenceEvent(int tenant, String type, String eventId, String txn, String messageId, String occurrence,
                                   JsonNode seq, JsonNode next, String at, String skippedFrom, String skippedTo, String ended) {
    }

    /** How a verdict ended an epoch. */
    private record End(String type, UUID messageId, Instant at, String record) {
    }

    /** One rule on a key, from the verdict that staged it. */
    private static final class Epoch {
        final Checker.Cmd cmd;
        final Series series;
        final UUID firstMessageId;
        final Map<String, List<SeenFire>> fires = new LinkedHashMap<>();
        /** Outcome events (fired, skipped, dead_lettered) by eventId: copies of one event are one event (at-least-once). */
        final Map<String, OccurrenceEvent> events = new LinkedHashMap<>();
        /** The cancel or reschedule that ended it (cancelled, too_late, rescheduled), if any. */
        End end;
        /** A verdict that needs this epoch to have ended on its own before it (absent, or a new series scheduled). */
        End mustHaveEnded;
        boolean violated;
        int delivered;
        boolean endedOnItsOwn;

        Epoch(Checker.Cmd cmd, UUID firstMessageId) {
            this.cmd = cmd;
            this.series = cmd.intent().series();
            this.firstMessageId = firstMessageId;
        }

        String name() {
            Intent in = cmd.intent();
            return "series " + series.txn() + " (tenant " + (in.tenant() == 0 ? "A" : "B") + " " + in.queue() + "/" + in.key() + ", " + series.rule() + ")";
        }
    }

    private final Findings f;
    private final Lateness late;
    private final long tooLateSlackMs;
    /** The epochs of each series key, in offset order. */
    private final Map<String, List<Epoch>> byKey = new LinkedHashMap<>();
    private final Map<String, Epoch> byTxn = new HashMap<>();
    private final Map<UUID, Epoch> byFirstMessage = new HashMap<>();
    private final List<OccurrenceEvent> events = new ArrayList<>();
    private long skippedEvents;
    private long cancels;
    private long reschedules;

    RecurringCheck(Findings f, Lateness late, long tooLateSlackMs) {
        this.f = f;
        this.late = late;
        this.tooLateSlackMs = tooLateSlackMs;
        KINDS.forEach(f::declare);
    }

    /**
     * An occurrence's txn as docs/formats.md ("Recurring occurrences") defines it: the series' txn, {@code @}, the instant in
     * ISO-8601 UTC with {@code Z} and the fraction of a second in groups of three digits, none when zero. Written here from
     * the document, not taken from the product's code.
     */
    static String occurrenceTxn(String seriesTxn, Instant occurrence) {
        return seriesTxn + "@" + DateTimeFormatter.ISO_INSTANT.format(occurrence);
    }

    /** An audit event that belongs here: it names an occurrence, is a {@code skipped}, or carries an occurrence's txn. */
    static boolean isOccurrenceEvent(JsonNode ev) {
        return ev.has("occurrence") || "skipped".equals(ev.path("type").asText()) || ev.path("txn").asText("").contains("@");
    }

    void event(int tenant, JsonNode ev) {
        JsonNode skipped = ev.path("skipped");
        events.add(new OccurrenceEvent(tenant, ev.path("type").asText(), ev.path("eventId").asText(), ev.path("txn").asText(null),
                ev.path("messageId").asText(null), ev.path("occurrence").asText(null), ev.get("seq"), ev.get("next"), ev.path("at").asText(null),
                skipped.path("from").asText(null), skipped.path("to").asText(null), ev.path("ended").asText(null)));
    }

    /**
     * A command of a series key, in offset order: the series (or a reschedule to a new rule), or a cancel. Its verdict
     * starts an epoch, ends one, or must find the last one ended on its own.
     */
    void command(Checker.Cmd c, String id, Checker.Verdict v) {
        Intent in = c.intent();
        List<Epoch> epochs = byKey.computeIfAbsent(c.timer(), k -> new ArrayList<>());
        Epoch last = epochs.isEmpty() ? null : epochs.get(epochs.size() - 1);
        Epoch live = last != null && last.end == null && last.mustHaveEnded == null ? last : null;
        String at = id + " (seq " + c.seq() + ", " + in.op() + " " + c.timer() + ") answered " + v.type();
        End end = new End(v.type(), v.messageId() == null ? null : UUID.fromString(v.messageId()), v.at() == null ? null : parse(v.at()), at);
        if (in.recurring()) {
            switch (v.type()) {
                case "scheduled" -> {
                    if (live != null) {
                        live.mustHaveEnded = end; // nothing was live: the epoch before had ended on its own
                    }
                    start(c, id, v, at);
                }
                case "rescheduled" -> {
                    if (live == null) {
                        f.violation("verdicts the semantics do not allow", at + " with no series live on the key: expected scheduled");
                        return;
                    }
                    reschedules++;
                    live.end = end;
                    start(c, id, v, at);
                }
                case "too_late" -> {
                    if (live == null) {
                        f.violation("verdicts the semantics do not allow", at + " with no series live on the key");
                    } // else the reschedule changed nothing (docs/recurring.md): the series goes on
                }
                default -> f.violation("verdicts the semantics do not allow", at + ": a schedule with a rule is scheduled, rescheduled or too_late");
            }
            return;
        }
        if (!in.cancel()) {
            f.violation("verdicts the semantics do not allow", at + ": the generator sends a series' key only series and cancels");
            return;
        }
        switch (v.type()) {
            case "cancelled", "too_late" -> {
                if (live == null) {
                    f.violation("verdicts the semantics do not allow", at + " with no series live on the key: expected absent");
                    return;
                }
                if ("too_late".equals(v.type()) && v.at() == null) {
                    f.violation("verdicts the semantics do not allow", at + " without an at: its time cannot be judged");
                }
                cancels++;
                live.end = end;
            }
            case "absent" -> {
                if (live != null) {
                    live.mustHaveEnded = end;
                }
            }
            default -> f.violation("verdicts the semantics do not allow", at + ": a cancel is cancelled, too_late or absent");
        }
    }

    /** A series' verdict (scheduled or rescheduled) starts an epoch: it must announce O1, the command's partition, the series' txn. */
    private void start(Checker.Cmd c, String id, Checker.Verdict v, String at) {
        Series s = c.intent().series();
        Instant first = s.occurrences().get(0);
        if (v.messageId() == null) {
            f.violation("inconsistent verdicts", at + " without a messageId");
            return;
        }
        if (!s.txn().equals(v.txn()) && !occurrenceTxn(s.txn(), first).equals(v.txn()) || !c.intent().partition().equals(v.partition())) {
            f.violation("inconsistent verdicts", at + ": txn " + v.txn() + " partition " + v.partition() + ", the series' are " + s.txn()
                    + " (or " + occurrenceTxn(s.txn(), first) + ") " + c.intent().partition());
        }
        if (v.deliverAt() == null || !parse(v.deliverAt()).equals(first)) {
            f.violation("verdict time is not the command's own time", at + ": deliverAt " + v.deliverAt() + ", the first occurrence is " + first);
        }
        Epoch e = new Epoch(c, UUID.fromString(v.messageId()));
        byKey.get(c.timer()).add(e);
        byTxn.put(s.txn(), e);
        byFirstMessage.put(e.firstMessageId, e);
    }

    /** A frame of the log; false when it is not a series' (the one-shot checks take it). */
    boolean fire(int tenant, String queue, String partition, Instant createdAt, DecodedFrame frame, long payloadHash, String where) {
        Epoch e = epochOf(frame.txn(), frame.messageId());
        if (e == null) {
            return false;
        }
        e.fires.computeIfAbsent(frame.txn(), k -> new ArrayList<>())
                .add(new SeenFire(tenant, queue, partition, createdAt, frame.messageId(), payloadHash, where));
        return true;
    }

    /** A DLQ row; false when it is not a series' occurrence. A healthy series' occurrence is never dead-lettered. */
    boolean dlqRow(UUID messageId, String txn, String where) {
        Epoch e = epochOf(txn, messageId);
        if (e == null) {
            return false;
        }
        violation(e, DEAD_LETTERED, e.name() + ": " + where);
        return true;
    }

    private Epoch epochOf(String txn, UUID messageId) {
        int at = txn == null ? -1 : txn.indexOf('@');
        Epoch e = at < 0 ? null : byTxn.get(txn.substring(0, at));
        return e != null ? e : messageId == null ? null : byFirstMessage.get(messageId);
    }

    void judge() {
        for (OccurrenceEvent ev : events) {
            UUID mid;
            try {
                mid = ev.messageId() == null ? null : UUID.fromString(ev.messageId());
            } catch (IllegalArgumentException notAnId) {
                mid = null;
            }
            Epoch e = epochOf(ev.txn(), mid);
            if (e == null) {
                f.violation("unknown messages in the log", ev.type() + " event of occurrence txn " + ev.txn() + " message " + ev.messageId()
                        + " on the audit topic of tenant " + ev.tenant() + ", which no series' verdict announced");
            } else {
                e.events.putIfAbsent(ev.eventId(), ev);
            }
        }
        long epochs = 0;
        long delivered = 0;
        long ownEnds = 0;
        long ownEndsWithReason = 0;
        Map<String, Long> byPolicy = new TreeMap<>();
        for (List<Epoch> key : byKey.values()) {
            for (Epoch e : key) {
                epochs++;
                walk(e);
                judgeEnd(e);
                delivered += e.delivered;
                byPolicy.merge(e.series.catchUp(), 1L, Long::sum);
                if (e.endedOnItsOwn) {
                    ownEnds++;
                    ownEndsWithReason += lastEvent(e) != null && lastEvent(e).ended() != null ? 1 : 0;
                }
            }
        }
        f.fact("recurring series (epochs: a rule from its verdict to its end)", epochs);
        f.fact("  by catchUp", byPolicy.toString());
        f.fact("  cancelled or too_late / rescheduled while running", cancels + " / " + reschedules);
        f.fact("  ended on their own (next null), of them with an ended reason", ownEnds + ", " + ownEndsWithReason);
        f.fact("recurring occurrences fired (frames in the log)", delivered);
        f.fact("recurring occurrences skipped (skipped events)", skippedEvents);
        List<Epoch> all = byKey.values().stream().flatMap(List::stream).toList();
        List<Epoch> shown = new ArrayList<>(all.stream().filter(e -> e.violated).limit(EXAMPLE_SERIES).toList());
        // Clean ones of both rule kinds too: the report shows what a passing series looks like.
        for (boolean cron : new boolean[] {false, true}) {
            all.stream().filter(e -> !e.violated && (e.series.cron() != null) == cron).findFirst()
                    .filter(e -> shown.size() < EXAMPLE_SERIES).ifPresent(shown::add);
        }
        for (int i = 0; i < shown.size(); i++) {
            f.fact("recurring example " + (i + 1), example(shown.get(i)));
        }
    }

    /** What happened to one occurrence instant of an epoch: its frames, fired events and skipped events. */
    private static final class Occurrence {
        final List<SeenFire> fires = new ArrayList<>();
        final List<OccurrenceEvent> fired = new ArrayList<>();
        final List<OccurrenceEvent> skipped = new ArrayList<>();
    }

    /** The walk from O1: each occurrence delivered once or skipped by the policy, in the rule's order, until the end. */
    private void walk(Epoch e) {
        Series s = e.series;
        String name = e.name();
        TreeMap<Instant, Occurrence> occ = new TreeMap<>();
        for (Map.Entry<String, List<SeenFire>> x : e.fires.entrySet()) {
            Instant t = instantOfTxn(x.getKey(), s.txn());
            if (t == null) {
                x.getValue().forEach(sf -> violation(e, OFF_RULE, name + ": txn " + x.getKey() + " at " + sf.where() + " is not <series txn>@<instant>"));
                continue;
            }
            occ.computeIfAbsent(t, k -> new Occurrence()).fires.addAll(x.getValue());
        }
        for (OccurrenceEvent ev : e.events.values()) {
            Instant t = parse(ev.occurrence());
            if (t == null) {
                t = instantOfTxn(ev.txn(), s.txn());
            }
            if (t == null) {
                violation(e, EVENTS_WRONG, name + ": " + ev.type() + " event " + ev.eventId() + " names no occurrence");
                continue;
            }
            switch (ev.type()) {
                case "fired" -> occ.computeIfAbsent(t, k -> new Occurrence()).fired.add(ev);
                case "skipped" -> {
                    skippedEvents++;
                    occ.computeIfAbsent(t, k -> new Occurrence()).skipped.add(ev);
                }
                default -> violation(e, DEAD_LETTERED, name + ": " + ev.type() + " event of occurrence " + t);
            }
        }
        Instant expected = s.firstAtOrAfter(s.startAt());
        boolean ended = false;
        Map<UUID, String> ids = new HashMap<>();
        boolean firstOutcome = true;
        for (Map.Entry<Instant, Occurrence> x : occ.entrySet()) {
            Instant t = x.getKey();
            Occurrence o = x.getValue();
            String at = name + " occurrence " + t + ": expected " + times(s.occurrences()) + ", seen " + seen(e);
            if (ended) {
                violation(e, OFF_RULE, at + ": after the series' last occurrence (a fired event's next was null)");
                continue;
            }
            if (!s.onRule(t) || t.isBefore(expected)) {
                violation(e, OFF_RULE, at + ": not the occurrence the walk expects (" + expected + ")");
                continue;
            }
            if (t.isAfter(expected)) {
                violation(e, LOST, at + ": " + expected + " was neither delivered nor skipped");
            }
            Instant next;
            if (!o.fires.isEmpty()) {
                next = delivered(e, t, o, ids, at, firstOutcome);
            } else if (!o.skipped.isEmpty()) {
                next = skipped(e, t, o, at, firstOutcome);
            } else {
                violation(e, EVENTS_WRONG, at + ": a fired event of an occurrence not in the log");
                continue;
            }
            firstOutcome = false;
            if (next == null) {
                ended = true;
            } else {
                expected = next;
            }
        }
        e.endedOnItsOwn = ended;
        if (!ended) {
            pending.put(e, expected);
        }
    }

    /** The occurrence each epoch left pending when its walk stopped (cancelled or rescheduled, or lost). */
    private final Map<Epoch, Instant> pending = new HashMap<>();

    /** A delivered occurrence: its frames, its fired event; returns the next occurrence its event names. */
    private Instant delivered(Epoch e, Instant t, Occurrence o, Map<UUID, String> ids, String at, boolean firstOutcome) {
        Series s = e.series;
        Intent in = e.cmd.intent();
        e.delivered++;
        for (int k = 1; k < o.fires.size(); k++) {
            violation(e, DOUBLED, at + " delivered " + o.fires.size() + " times (" + o.fires.stream().map(SeenFire::where).toList() + ")");
        }
        String txn = occurrenceTxn(s.txn(), t);
        for (SeenFire sf : o.fires) {
            if (sf.createdAt().isBefore(t)) {
                violation(e, EARLY, at + ": created_at " + sf.createdAt() + " at " + sf.where());
            }
            if (sf.tenant() != in.tenant() || !sf.queue().equals(in.queue())) {
                violation(e, "tenant crossings", at + ": in " + sf.where());
            }
            if (!sf.partition().equals(in.partition()) || sf.payloadHash() != in.payloadHash()) {
                violation(e, WRONG_CONTENT, at + ": " + sf.where() + ", the series' partition is " + in.partition());
            }
            String other = ids.putIfAbsent(sf.messageId(), txn);
            if (other != null && !other.equals(txn)) {
                violation(e, SHARED_ID, at + ": message " + sf.messageId() + " also delivered " + other);
            }
        }
        SeenFire first = o.fires.get(0);
        if (firstOutcome && !first.messageId().equals(e.firstMessageId)) {
            violation(e, "inconsistent verdicts", at + ": delivered as message " + first.messageId() + ", the verdict announced " + e.firstMessageId);
        }
        if (!o.skipped.isEmpty()) {
            violation(e, POLICY, at + ": delivered and skipped both");
        }
        if (o.fired.size() != 1) {
            violation(e, EVENTS_WRONG, at + ": " + o.fired.size() + " fired events (distinct eventIds), expected 1");
        }
        OccurrenceEvent ev = o.fired.isEmpty() ? null : o.fired.get(0);
        late.fire(LATE, at, e.cmd.timestamp(), t.toEpochMilli(), first.createdAt().toEpochMilli(), first.messageId(), txn,
                ev == null ? null : ev.eventId());
        if (ev == null) {
            Instant following = s.nextInWindow(t);
            return maxReached(e) ? null : following; // judged as if it named the rule's next (reported above)
        }
        boolean stopped = e.end != null && "too_late".equals(e.end.type()) && first.messageId().equals(e.end.messageId());
        List<String> wrong = new ArrayList<>();
        if (!t.equals(parse(ev.occurrence()))) {
            wrong.add("occurrence " + ev.occurrence());
        }
        if (ev.seq() == null || !ev.seq().canConvertToInt() || ev.seq().asInt() != e.delivered) {
            wrong.add("seq " + ev.seq() + " (expected " + e.delivered + ", the deliveries so far)");
        }
        if (o.fires.stream().noneMatch(sf -> sf.messageId().toString().equals(ev.messageId()))) {
            wrong.add("messageId " + ev.messageId() + " is not the delivered message's");
        }
        // the fire's own time, by the database's clock: the outbox row's created_at, in the fire's transaction
        Instant fireAt = ev.at() != null ? parse(ev.at()) : first.createdAt();
        Instant next = judgeNext(e, t, ev, fireAt, false, stopped, at, wrong);
        if (!wrong.isEmpty()) {
            violation(e, EVENTS_WRONG, at + ": fired event " + ev.eventId() + " has " + String.join(", ", wrong));
        }
        return next;
    }

    /** A skipped occurrence (catchUp none: missed, not delivered); returns the next occurrence its event names. */
    private Instant skipped(Epoch e, Instant t, Occurrence o, String at, boolean firstOutcome) {
        OccurrenceEvent ev = o.skipped.get(0);
        List<String> wrong = new ArrayList<>();
        if (firstOutcome && !e.firstMessageId.toString().equals(ev.messageId())) {
            violation(e, "inconsistent verdicts", at + ": skipped as message " + ev.messageId() + ", the verdict announced " + e.firstMessageId);
        }
        if (!"none".equals(e.series.catchUp())) {
            violation(e, POLICY, at + ": a skipped event under catchUp " + e.series.catchUp() + " (only none leaves an occurrence out)");
        }
        if (ev.seq() == null || !ev.seq().canConvertToInt() || ev.seq().asInt() != e.delivered + 1) {
            wrong.add("seq " + ev.seq() + " (expected " + (e.delivered + 1) + ": a skip does not count)");
        }
        if (ev.skippedFrom() == null || !t.equals(parse(ev.skippedFrom()))) {
            wrong.add("skipped.from " + ev.skippedFrom() + " (expected the occurrence itself, " + t + ")");
        }
        Instant fireAt = parse(ev.at());
        Instant next = judgeNext(e, t, ev, fireAt == null ? t : fireAt, true, false, at, wrong);
        if (!wrong.isEmpty()) {
            violation(e, EVENTS_WRONG, at + ": skipped event " + ev.eventId() + " has " + String.join(", ", wrong));
        }
        return next;
    }

    /**
     * The next occurrence an outcome event names, against the rule and the policy at the outcome's own time {@code at} (the
     * database's clock): without a skip, the rule's next (null past endAt or at maxOccurrences); with one, a range of
     * occurrences all due at {@code at}, the next after them not, and the rule's next after the range. catchUp one and none
     * must skip an occurrence already due at the fire; all never skips here. {@code stopped}: a cancel met this occurrence in
     * a sweeper's hands, so it has no successor.
     */
    private Instant judgeNext(Epoch e, Instant t, OccurrenceEvent ev, Instant at, boolean isSkip, boolean stopped, String where,
                              List<String> wrong) {
        Series s = e.series;
        long slack = Checker.CLOCK_SLACK_MS;
        Instant named = ev.next() == null || ev.next().isNull() ? null : parse(ev.next().asText());
        if (ev.next() == null) {
            wrong.add("no next");
        }
        Instant expectedNext;
        if (ev.skippedFrom() != null && ev.skippedTo() != null && !isSkip) {
            Instant from = parse(ev.skippedFrom());
            Instant to = parse(ev.skippedTo());
            Instant following = s.nextInWindow(t);
            if ("all".equals(s.catchUp())) {
                violation(e, POLICY, where + ": catchUp all skipped " + from + ".." + to);
            }
            if (from == null || !from.equals(following)) {
                violation(e, POLICY, where + ": skipped from " + from + ", the occurrence after it is " + following);
            }
            expectedNext = skipRange(e, from, to, at, where);
        } else if (isSkip) {
            Instant to = parse(ev.skippedTo());
            expectedNext = skipRange(e, t, to, at, where);
        } else {
            Instant following = s.nextInWindow(t);
            expectedNext = maxReached(e) ? null : following;
            if (!stopped && following != null && !maxReached(e) && !"all".equals(s.catchUp()) && following.toEpochMilli() < at.toEpochMilli() - slack) {
                violation(e, POLICY, where + ": the next occurrence " + following + " was due at the fire (" + at + ") and catchUp "
                        + s.catchUp() + " skips it");
            }
        }
        if (stopped) {
            expectedNext = null; // the cancel dropped the rule: this occurrence goes out, nothing follows (docs/recurring.md)
        }
        if (expectedNext == null ? named != null : !expectedNext.equals(named)) {
            wrong.add("next " + ev.next() + " (expected " + expectedNext + ")");
        }
        // Where the series ends, the event says why (docs/recurring.md "Events"): a cancel that met the occurrence in hands,
        // the count of deliveries, or the window's end; and says nothing while it goes on.
        String why = expectedNext != null ? null : stopped ? "cancelled" : maxReached(e) ? "max_occurrences" : "end_at";
        if (why == null ? ev.ended() != null : !why.equals(ev.ended())) {
            wrong.add("ended " + ev.ended() + " (expected " + why + ")");
        }
        // the walk goes on by the rule, not by the event: an occurrence the event jumped over is then reported lost
        return expectedNext;
    }

    /** A skipped range from..to at {@code at}: each on the rule and due then, the one after it not; returns the rule's next after it. */
    private Instant skipRange(Epoch e, Instant from, Instant to, Instant at, String where) {
        Series s = e.series;
        long slack = Checker.CLOCK_SLACK_MS;
        if (to == null || from == null || to.isBefore(from) || !s.onRule(to)) {
            violation(e, POLICY, where + ": skipped range " + from + ".." + to + " is not a range of the rule's occurrences");
            return null;
        }
        if (to.toEpochMilli() > at.toEpochMilli() + slack) {
            violation(e, POLICY, where + ": skipped up to " + to + ", not yet due at " + at + " by the database's clock");
        }
        Instant after = s.nextInWindow(to);
        if (after != null && after.toEpochMilli() < at.toEpochMilli() - slack) {
            violation(e, POLICY, where + ": skipped only up to " + to + ", while " + after + " was due too at " + at);
        }
        return maxReached(e) ? null : after;
    }

    private static boolean maxReached(Epoch e) {
        Integer max = e.series.maxOccurrences();
        return max != null && e.delivered >= max;
    }

    /** How the epoch ended against the verdicts that met it. */
    private void judgeEnd(Epoch e) {
        String name = e.name();
        Instant pendingAt = pending.get(e);
        Set<UUID> deliveredIds = new HashSet<>();
        e.fires.values().forEach(l -> l.forEach(sf -> deliveredIds.add(sf.messageId())));
        if (e.mustHaveEnded != null && !e.endedOnItsOwn) {
            f.violation("verdicts the semantics do not allow", e.mustHaveEnded.record() + " while " + name + " had occurrence " + pendingAt
                    + " pending (never delivered, its series not ended)");
            e.violated = true;
        }
        End end = e.end;
        if (end == null) {
            if (!e.endedOnItsOwn && e.mustHaveEnded == null) {
                violation(e, LOST, name + ": occurrence " + pendingAt + " never delivered, and no cancel or reschedule ended the series; seen " + seen(e));
            }
            return;
        }
        switch (end.type()) {
            case "too_late" -> {
                // the occurrence in hands goes out, and nothing after it
                if (end.messageId() == null || !deliveredIds.contains(end.messageId())) {
                    violation(e, AFTER_END, end.record() + " naming " + end.messageId() + ", which " + name + " never delivered");
                } else if (!e.endedOnItsOwn) {
                    violation(e, AFTER_END, end.record() + ": " + name + " went on after it (occurrence " + pendingAt + " pending)");
                }
            }
            case "cancelled", "rescheduled" -> {
                if (end.messageId() != null && deliveredIds.contains(end.messageId())) {
                    violation(e, AFTER_END, end.record() + ": the message it named, " + end.messageId() + ", was delivered in " + name);
                }
                if (e.endedOnItsOwn) {
                    violation(e, AFTER_END, end.record() + ": " + name + " delivered its last occurrence after it (nothing was left to "
                            + end.type().replace("led", "l").replace("rescheduled", "reschedule") + ")");
                }
                if (end.at() != null) {
                    for (List<SeenFire> l : e.fires.values()) {
                        for (SeenFire sf : l) {
                            if (sf.createdAt().toEpochMilli() > end.at().toEpochMilli() + tooLateSlackMs) {
                                violation(e, AFTER_END, end.record() + " at " + end.at() + ": " + name + " fired at " + sf.createdAt() + " ("
                                        + sf.where() + "), more than " + tooLateSlackMs + " ms after");
                            }
                        }
                    }
                }
            }
            default -> throw new IllegalStateException(end.type());
        }
    }

    private static OccurrenceEvent lastEvent(Epoch e) {
        OccurrenceEvent last = null;
        for (OccurrenceEvent ev : e.events.values()) {
            Instant t = parse(ev.occurrence());
            if (t != null && (last == null || t.isAfter(parse(last.occurrence())))) {
                last = ev;
            }
        }
        return last;
    }

    private void violation(Epoch e, String kind, String example) {
        e.violated = true;
        f.violation(kind, example);
    }

    /** The instant of {@code <seriesTxn>@<instant>}, or null when the txn is not one of the series'. */
    private static Instant instantOfTxn(String txn, String seriesTxn) {
        if (txn == null || !txn.startsWith(seriesTxn + "@")) {
            return null;
        }
        Instant t = parse(txn.substring(seriesTxn.length() + 1));
        return t != null && occurrenceTxn(seriesTxn, t).equals(txn) ? t : null;
    }

    private static Instant parse(String text) {
        if (text == null) {
            return null;
        }
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (RuntimeException e) {
            try {
                return Instant.parse(text);
            } catch (RuntimeException e2) {
                return null;
            }
        }
    }

    private static String example(Epoch e) {
        return e.name() + ": expected under catchUp all " + times(e.series.occurrences()) + ", seen " + seen(e)
                + (e.end != null ? ", ended by " + e.end.type() : e.endedOnItsOwn ? ", ended on its own" : "");
    }

    /** The occurrences' UTC times of day (the date is the run's): short enough for a table row. */
    private static String times(List<Instant> instants) {
        return instants.stream().map(RecurringCheck::timeOfDay).collect(Collectors.joining(" ", "[", "]"));
    }

    private static String timeOfDay(Instant t) {
        return (t.getNano() == 0 ? SECONDS : MILLIS).format(t.atOffset(ZoneOffset.UTC));
    }

    private static final DateTimeFormatter SECONDS = DateTimeFormatter.ofPattern("HH:mm:ss");
    private static final DateTimeFormatter MILLIS = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    /** The delivered occurrences by txn, in log order of first sight, a doubled one marked x2; skips marked "-". */
    private static String seen(Epoch e) {
        TreeMap<Instant, String> marks = new TreeMap<>();
        e.fires.forEach((txn, l) -> {
            Instant t = instantOfTxn(txn, e.series.txn());
            if (t != null) {
                marks.put(t, timeOfDay(t) + (l.size() > 1 ? " x" + l.size() : ""));
            }
        });
        e.events.values().stream().filter(ev -> "skipped".equals(ev.type())).forEach(ev -> {
            Instant t = parse(ev.occurrence());
            if (t != null) {
                marks.putIfAbsent(t, "-" + timeOfDay(t));
            }
        });
        return marks.values().stream().collect(Collectors.joining(" ", "[", "]"));
    }
}
