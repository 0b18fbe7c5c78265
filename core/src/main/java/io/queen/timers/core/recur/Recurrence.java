package io.queen.timers.core.recur;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.client.command.CatchUp;
import io.queen.timers.client.command.WireFormat;
import java.io.IOException;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A recurring timer's rule (docs/recurring.md): which instants are its occurrences, and what follows an
 * occurrence fired at a given clock under its catch-up policy. The one place that reads rules: the bridge
 * parses with it (first occurrence, verdict), the sweeper plans with it (next occurrence), and the stored
 * form ({@link #toJson}) is what {@code queen.log_timers.recurrence} holds. Here in core, not in the client: the client
 * writes a rule's fields and its policy ({@link CatchUp}) on the wire, while reading a rule, judging it (bad_rule) and
 * stepping it is the services' (the bridge, the sweeper, the operators' reads), so a producer carries no cron library
 * and no second judge of a rule that could disagree with the bridge.
 *
 * <p>Instants are whole milliseconds (startAt and endAt are cut to the millisecond, every must be whole
 * milliseconds), so an occurrence survives PostgreSQL's microsecond timestamptz unchanged and the next one
 * computed from the stored deliver_at is the same as from the instant it was staged for.
 */
public final class Recurrence {

    /** A rule that cannot be read (reject reason bad_rule); the message is the detail. */
    public static final class RuleException extends RuntimeException {
        public RuleException(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Why the rule ends a series with an occurrence (its event's {@code "ended"}, docs/recurring.md#events); the stored
     * functions add the bounds they decide ({@code dead_letters}, {@code encryption_required}, {@code cancelled}).
     */
    public enum End {
        /** It was the maxOccurrences-th. */
        MAX_OCCURRENCES("max_occurrences"),
        /** The rule's next occurrence is after endAt. */
        END_AT("end_at"),
        /** The rule has no later occurrence at all (none before the latest delivery time, 9999-12-31). */
        NO_OCCURRENCE("no_occurrence"),
        /** The stored rule cannot be read or stepped (a row edited by hand): this occurrence is its last. */
        RULE_UNREADABLE("rule_unreadable");

        private final String wireName;

        End(String wireName) {
            this.wireName = wireName;
        }

        public String wireName() {
            return wireName;
        }
    }

    /**
     * What the sweeper does with occurrence {@code occurrence} met at its clock: deliver it or not (catchUp
     * none skips a missed one), the next occurrence to stage (null: the series ends, and {@code end} says why), and the
     * range of occurrences passed over (both null when none was).
     */
    public record Plan(boolean deliver, Instant next, Instant skippedFrom, Instant skippedTo, End end) {

        /** A plan whose series goes on (no end). */
        public Plan(boolean deliver, Instant next, Instant skippedFrom, Instant skippedTo) {
            this(deliver, next, skippedFrom, skippedTo, null);
        }

        /**
         * As the stored functions read it (queen.timer_series_next_v1): {"deliver", "next", "skippedFrom", "skippedTo",
         * "end"}; "end" only when the series ends.
         */
        public ObjectNode toJson() {
            ObjectNode o = JSON.createObjectNode().put("deliver", deliver);
            o.put("next", next == null ? null : next.toString());
            if (skippedFrom != null) {
                o.put("skippedFrom", skippedFrom.toString()).put("skippedTo", skippedTo.toString());
            }
            if (end != null) {
                o.put("end", end.wireName());
            }
            return o;
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final CronParser UNIX = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
    private static final CronParser SPRING = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING));

    private final String cron;
    private final ZoneId zone;
    private final ExecutionTime execution;
    private final Duration every;
    private final Instant startAt;
    private final Instant endAt;
    private final Integer maxOccurrences;
    private final CatchUp catchUp;
    private final String txn;

    /**
     * A rule as a command or a stored row gives it, each field as written (docs/recurring.md): exactly one of {@code cron}
     * and {@code every}; the others may be null.
     */
    public record Spec(String cron, String zone, String every, String startAt, String endAt, Long maxOccurrences, String catchUp) {}

    /** Where a series starts and ends: its first occurrence's anchor, the last instant it may reach, its most occurrences. */
    private record Span(Instant startAt, Instant endAt, Integer maxOccurrences) {}

    private Recurrence(String cron, ZoneId zone, Duration every, Span span, CatchUp catchUp, String txn) {
        this.cron = cron;
        this.zone = zone;
        this.execution = cron == null ? null : ExecutionTime.forCron(parseCron(cron));
        this.every = every;
        this.startAt = span.startAt();
        this.endAt = span.endAt();
        this.maxOccurrences = span.maxOccurrences();
        this.catchUp = catchUp;
        this.txn = txn;
    }

    /**
     * Reads a command's rule, of the series {@code txn}. {@code defaultStart} (the record's timestamp) anchors a rule without
     * startAt: a cron's first occurrence is at or after it, an every's first is one period after it.
     *
     * @throws RuleException for bad_rule
     */
    public static Recurrence of(Spec rule, String txn, Instant defaultStart) {
        return read(rule, txn, defaultStart, true);
    }

    /**
     * @param command true for a command's rule: the cron text is at most {@link WireFormat#CRON_MAX_CHARS} and the zone an
     *                IANA region id; false for a stored rule, which reads as it was stored (a row staged before those checks
     *                keeps its series: "Z" or "+05:00" still read)
     */
    private static Recurrence read(Spec rule, String txn, Instant defaultStart, boolean command) {
        String cron = rule.cron();
        String zone = rule.zone();
        String every = rule.every();
        String startAt = rule.startAt();
        String endAt = rule.endAt();
        Long maxOccurrences = rule.maxOccurrences();
        String catchUp = rule.catchUp();
        if ((cron == null) == (every == null)) {
            throw new RuleException("give exactly one of cron and every");
        }
        if (zone != null && cron == null) {
            throw new RuleException("zone is only for cron");
        }
        ZoneId z = null;
        if (cron != null) {
            if (command && cron.length() > WireFormat.CRON_MAX_CHARS) {
                // before cron-utils reads it: the text is copied into the row and every event of the series
                throw new RuleException("cron is " + cron.length() + " characters, longer than " + WireFormat.CRON_MAX_CHARS);
            }
            parseCron(cron);
            if (command && zone != null && !ZoneId.getAvailableZoneIds().contains(zone)) {
                // ZoneId.of also reads offsets ("+05:00", "UTC+5"): a fixed offset has no daylight-saving time, which is
                // what a zone is for; UTC, Etc/UTC and Etc/GMT-5 are IANA ids and pass
                throw new RuleException("zone '" + zone + "' is not an IANA region id such as Europe/Berlin or UTC");
            }
            try {
                z = zone == null ? java.time.ZoneOffset.UTC : ZoneId.of(zone);
            } catch (DateTimeException e) {
                throw new RuleException("zone '" + zone + "' is not an IANA zone id");
            }
        }
        Duration d = null;
        if (every != null) {
            try {
                d = Duration.parse(every);
            } catch (DateTimeException e) {
                throw new RuleException("every '" + every + "' is not an ISO-8601 duration such as PT30S or P1D");
            }
            if (d.compareTo(WireFormat.EVERY_MIN) < 0) {
                throw new RuleException("every " + d + " is shorter than " + WireFormat.EVERY_MIN);
            }
            if (!d.truncatedTo(ChronoUnit.MILLIS).equals(d)) {
                throw new RuleException("every " + d + " is not whole milliseconds");
            }
        }
        Instant start = startAt != null ? instant(startAt, "startAt")
                : every != null ? defaultStart.truncatedTo(ChronoUnit.MILLIS).plus(d) : defaultStart.truncatedTo(ChronoUnit.MILLIS);
        Instant end = endAt == null ? null : instant(endAt, "endAt");
        if (end != null && end.isBefore(start)) {
            throw new RuleException("endAt " + end + " is before startAt " + start);
        }
        if (maxOccurrences != null && (maxOccurrences < 1 || maxOccurrences > Integer.MAX_VALUE)) {
            throw new RuleException("maxOccurrences must be an integer from 1 to " + Integer.MAX_VALUE);
        }
        CatchUp c = catchUp == null ? CatchUp.ONE
                : CatchUp.fromWire(catchUp).orElseThrow(() -> new RuleException("catchUp '" + catchUp + "' is not one, all or none"));
        return new Recurrence(cron, z, d, new Span(start, end, maxOccurrences == null ? null : maxOccurrences.intValue()), c, txn);
    }

    private static Instant instant(String text, String name) {
        try {
            Instant at = java.time.OffsetDateTime.parse(text).toInstant().truncatedTo(ChronoUnit.MILLIS);
            if (at.isBefore(WireFormat.EARLIEST_DELIVERY) || at.isAfter(WireFormat.LATEST_DELIVERY)) {
                throw new RuleException(name + " " + at + " is not between 1970 and " + WireFormat.LATEST_DELIVERY);
            }
            return at;
        } catch (DateTimeException e) {
            throw new RuleException(name + " '" + text + "' is not an ISO-8601 instant with offset");
        }
    }

    private static Cron parseCron(String expression) {
        String[] fields = expression.trim().split("\\s+");
        CronParser parser = fields.length == 5 ? UNIX : fields.length == 6 ? SPRING : null;
        if (parser == null) {
            throw new RuleException("cron '" + expression + "' has " + fields.length + " fields, not 5 or 6");
        }
        try {
            return parser.parse(expression).validate();
        } catch (RuntimeException e) {
            throw new RuleException("cron '" + expression + "' is not valid: " + e.getMessage());
        }
    }

    /**
     * A gap between two consecutive occurrences shorter than {@code min}, if the rule has one (the bridge's
     * recurring.min.period; reject reason period_too_short). An {@code every} rule's gap is its period. A cron's is read from
     * its seconds and minutes fields as if every hour, day and month matched (the pattern then repeats each hour): walked over
     * one hour and the step into the next, at most 3,600 / min + 2 evaluations, stopping at the first short gap. A 5-field
     * cron is never closer than a minute, so it is not walked for a min of a minute or less.
     *
     * <p>PRICE: a rule whose hour, day or month fields keep its minutes apart (minutes 55 and 5 of hours 1 and 3 only) is
     * judged by its minutes as if consecutive hours matched, so it may be refused though its real gaps pass; and a
     * daylight-saving shift of less than an hour (Australia/Lord_Howe's 30 min) can bring two occurrences closer once a year.
     */
    public Optional<Duration> gapShorterThan(Duration min) {
        if (every != null) {
            return every.compareTo(min) < 0 ? Optional.of(every) : Optional.empty();
        }
        String[] fields = cron.trim().split("\\s+");
        if (fields.length == 5 && min.compareTo(Duration.ofMinutes(1)) <= 0 || min.compareTo(Duration.ofSeconds(1)) <= 0) {
            return Optional.empty();
        }
        String hourly = fields.length == 6 ? fields[0] + " " + fields[1] + " * * * *" : "0 " + fields[0] + " * * * *";
        ExecutionTime pattern = ExecutionTime.forCron(parseCron(hourly));
        ZonedDateTime hour = ZonedDateTime.of(2000, 1, 1, 0, 0, 0, 0, java.time.ZoneOffset.UTC);
        ZonedDateTime end = hour.plusHours(1);
        ZonedDateTime prev = null;
        ZonedDateTime at = pattern.isMatch(hour) ? hour : pattern.nextExecution(hour).orElse(null);
        while (at != null) {
            if (prev != null) {
                Duration gap = Duration.between(prev, at);
                if (gap.compareTo(min) < 0) {
                    return Optional.of(gap);
                }
            }
            if (!at.isBefore(end)) {
                break;   // the step into the next hour was measured
            }
            prev = at;
            at = pattern.nextExecution(at).orElse(null);
        }
        return Optional.empty();
    }

    /** The first occurrence, if the rule has one (else the verdict is no_occurrence). */
    public Optional<Instant> first() {
        return atOrAfter(startAt);
    }

    /** The first occurrence strictly after {@code t}, within the window (never counts maxOccurrences). */
    public Optional<Instant> after(Instant t) {
        if (t.isBefore(startAt)) {
            return first();
        }
        Instant n;
        if (every != null) {
            long k = Duration.between(startAt, t).dividedBy(every) + 1;
            n = startAt.plus(every.multipliedBy(k));
        } else {
            n = execution.nextExecution(ZonedDateTime.ofInstant(t.truncatedTo(ChronoUnit.SECONDS), zone))
                    .map(ZonedDateTime::toInstant).orElse(null);
        }
        return inWindow(n);
    }

    /** The last occurrence at or before {@code t}, not before startAt (empty if none). */
    public Optional<Instant> atOrBefore(Instant t) {
        if (t.isBefore(startAt)) {
            return Optional.empty();
        }
        Instant n;
        if (every != null) {
            n = startAt.plus(every.multipliedBy(Duration.between(startAt, t).dividedBy(every)));
        } else {
            ZonedDateTime s = ZonedDateTime.ofInstant(t.truncatedTo(ChronoUnit.SECONDS), zone);
            n = execution.isMatch(s) ? s.toInstant() : execution.lastExecution(s).map(ZonedDateTime::toInstant).orElse(null);
            if (n != null && n.isBefore(startAt)) {
                n = null;
            }
        }
        if (n != null && endAt != null && n.isAfter(endAt)) {
            return atOrBefore(endAt);
        }
        return Optional.ofNullable(n);
    }

    private Optional<Instant> atOrAfter(Instant t) {
        if (every != null) {
            return inWindow(t.isAfter(startAt) ? after(t.minusMillis(1)).orElse(null) : startAt);
        }
        // cron occurrences are whole seconds: none lies between a fractional t and its next second
        ZonedDateTime s = ZonedDateTime.ofInstant(t.truncatedTo(ChronoUnit.SECONDS), zone);
        if (t.getNano() == 0 && execution.isMatch(s)) {
            return inWindow(t);
        }
        return inWindow(execution.nextExecution(s).map(ZonedDateTime::toInstant).orElse(null));
    }

    private Optional<Instant> inWindow(Instant n) {
        if (n == null || (endAt != null && n.isAfter(endAt)) || n.isAfter(WireFormat.LATEST_DELIVERY)) {
            return Optional.empty();
        }
        return Optional.of(n);
    }

    /**
     * What follows occurrence number {@code seq} (1-based, deliveries so far including this one), due at
     * {@code occurrence}, met by the sweeper at {@code now} (docs/recurring.md "The fire of an occurrence").
     */
    public Plan plan(Instant occurrence, int seq, Instant now) {
        return plan(occurrence, seq, now, false);
    }

    /**
     * {@link #plan(Instant, int, Instant)} for an occurrence that leaves the table delivered or dead-lettered
     * whatever its policy says: catchUp none then reads as one (the occurrence is gone; the series resumes
     * after now). The fire uses it for an occurrence the sweeper decided to deliver earlier in its cycle,
     * the dead letter for one that failed.
     */
    public Plan planLeaving(Instant occurrence, int seq, Instant now) {
        return plan(occurrence, seq, now, true);
    }

    private Plan plan(Instant occurrence, int seq, Instant now, boolean leaving) {
        Instant following = after(occurrence).orElse(null);
        boolean missedSome = following != null && !following.isAfter(now);
        if (!missedSome) {
            return planned(true, ended(seq) ? null : following, null, null, seq);
        }
        Instant lastDue = atOrBefore(now).orElse(following);
        switch (leaving && catchUp == CatchUp.NONE ? CatchUp.ONE : catchUp) {
            case ALL -> {
                // fire every missed one, but at most CATCH_UP_ALL_MAX after one outage: the last ones. A series
                // with no more deliveries than that left (maxOccurrences) fires them all, whatever the outage.
                if (maxOccurrences != null && (long) maxOccurrences - seq <= WireFormat.CATCH_UP_ALL_MAX) {
                    return planned(true, ended(seq) ? null : following, null, null, seq);
                }
                Instant from = following;
                int n = 1;
                for (Instant c = following; n <= WireFormat.CATCH_UP_ALL_MAX; n++) {
                    Instant a = after(c).orElse(null);
                    if (a == null || a.isAfter(now)) {
                        return planned(true, ended(seq) ? null : following, null, null, seq);
                    }
                    c = a;
                }
                Instant keep = lastDue;
                for (int i = 1; i < WireFormat.CATCH_UP_ALL_MAX; i++) {
                    keep = atOrBefore(keep.minusMillis(1)).orElse(keep);
                }
                Instant skippedTo = atOrBefore(keep.minusMillis(1)).orElse(from);
                return planned(true, ended(seq) ? null : keep, from, skippedTo, seq);
            }
            case ONE -> {
                return planned(true, ended(seq) ? null : after(now).orElse(null), following, lastDue, seq);
            }
            default -> {
                // none: this occurrence is missed too; nothing is delivered, so seq does not move
                return planned(false, after(now).orElse(null), occurrence, lastDue, seq);
            }
        }
    }

    /** A plan, and when it stages nothing, why: maxOccurrences reached by a delivery, else endAt, else no occurrence left. */
    private Plan planned(boolean deliver, Instant next, Instant skippedFrom, Instant skippedTo, int seq) {
        End end = next != null ? null : deliver && ended(seq) ? End.MAX_OCCURRENCES : endAt != null ? End.END_AT : End.NO_OCCURRENCE;
        return new Plan(deliver, next, skippedFrom, skippedTo, end);
    }

    /**
     * Up to {@code n} occurrences from {@code occurrence} (number {@code seq}, pending) on, as the rule and maxOccurrences
     * allow, for people (peek): a fire that meets missed occurrences plans by its catchUp, which this does not foresee.
     */
    public List<Instant> upcoming(Instant occurrence, int seq, int n) {
        List<Instant> out = new ArrayList<>();
        Instant c = occurrence;
        for (int s = seq; c != null && out.size() < n; s++) {
            out.add(c);
            c = ended(s) ? null : after(c).orElse(null);
        }
        return out;
    }

    private boolean ended(int seq) {
        return maxOccurrences != null && seq >= maxOccurrences;
    }

    /** The stored form (queen.log_timers.recurrence), with the occurrence's number. */
    public String toJson(int seq) {
        ObjectNode o = JSON.createObjectNode();
        if (cron != null) {
            o.put("cron", cron).put("zone", zone.getId());
        } else {
            o.put("every", every.toString());
        }
        o.put("startAt", startAt.toString());
        if (endAt != null) {
            o.put("endAt", endAt.toString());
        }
        if (maxOccurrences != null) {
            o.put("maxOccurrences", maxOccurrences);
        }
        o.put("catchUp", catchUp.wireName()).put("txn", txn).put("seq", seq);
        return o.toString();
    }

    /**
     * A stored rule and its occurrence number, as {@link #toJson} wrote it; {@code stopped} the reason a command stopped
     * the series while this occurrence was in a sweeper's hands ({@code "cancelled"}: a too_late cancel marked the rule,
     * bridge_apply_v4), null while it goes on. A stopped series' pending occurrence is its last.
     */
    public record Stored(Recurrence rule, int seq, String stopped) {

        public boolean isStopped() {
            return stopped != null;
        }
    }

    /** Reads the stored form; a row the bridge wrote always reads. */
    public static Stored fromJson(String json) {
        JsonNode o;
        try {
            o = JSON.readTree(json);
        } catch (IOException e) {
            throw new RuleException("stored recurrence is not JSON: " + e.getMessage());
        }
        Recurrence r = read(new Spec(text(o, "cron"), text(o, "zone"), text(o, "every"), text(o, "startAt"), text(o, "endAt"),
                o.hasNonNull("maxOccurrences") ? o.get("maxOccurrences").asLong() : null, text(o, "catchUp")), text(o, "txn"),
                Instant.EPOCH, false);
        return new Stored(r, o.path("seq").asInt(1), text(o, "stopped"));
    }

    private static String text(JsonNode o, String name) {
        JsonNode n = o.get(name);
        return n == null || n.isNull() ? null : n.asText();
    }

    public String txn() {
        return txn;
    }

    public CatchUp catchUp() {
        return catchUp;
    }

    public Instant startAt() {
        return startAt;
    }

    /** One line for list/peek: "cron '30 2 * * *' Europe/Berlin" or "every PT1H", and the window's limits. */
    public String describe() {
        StringBuilder b = new StringBuilder(cron != null ? "cron '" + cron + "' " + zone.getId() : "every " + every);
        b.append(", from ").append(startAt);
        if (endAt != null) {
            b.append(" to ").append(endAt);
        }
        if (maxOccurrences != null) {
            b.append(", at most ").append(maxOccurrences);
        }
        return b.append(", catchUp ").append(catchUp.wireName()).toString();
    }
}
