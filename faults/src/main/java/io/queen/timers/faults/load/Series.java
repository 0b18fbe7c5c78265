package io.queen.timers.faults.load;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * A recurring timer as the generator sent it (docs/recurring.md), and the oracle's occurrences of it. Only the rules
 * the harness sends are modelled, each by plain arithmetic, never by the product's {@code Recurrence}: an {@code every}
 * rule ({@code startAt + k·every}), or a 6-field cron whose only non-{@code *} field is the seconds field,
 * {@code first/step} (the seconds {@code first, first+step, ... <= 59} of every minute in {@link #zone}).
 * CommandGeneratorTest holds this arithmetic against cron-utils.
 *
 * @param txn            the series' txn; occurrence <i>i</i> carries {@code txn@Oi} (WireFormat.occurrenceTxn)
 * @param cron           the cron expression sent, or null for an {@code every} rule
 * @param every          the period sent, or null for a cron rule
 * @param endAt          the window's end sent, or null
 * @param maxOccurrences the count sent (of deliveries: a skipped occurrence does not count), or null
 * @param catchUp        the policy sent: {@code all}, {@code one} or {@code none} (docs/recurring.md "The fire of an occurrence")
 * @param occurrences    O1..On: the instants delivered when none is missed (every one, under catchUp {@code all})
 */
public record Series(String txn, String cron, ZoneId zone, Duration every, Instant startAt, Instant endAt, Integer maxOccurrences,
                     String catchUp, List<Instant> occurrences) {

    public Series {
        occurrences = List.copyOf(occurrences);
    }

    /** The cron rules the generator draws from: the first second and the step of the seconds field. */
    static final int[][] CRON_SECONDS = {{0, 2}, {0, 3}, {1, 2}, {0, 7}};

    static String cronOf(int[] firstStep) {
        return (firstStep[0] == 0 && firstStep[1] == 2 ? "*" : Integer.toString(firstStep[0])) + "/" + firstStep[1] + " * * * * *";
    }

    /** The rule's first occurrence at or after {@code t} (docs/recurring.md: "at or after startAt"). */
    public Instant firstAtOrAfter(Instant t) {
        if (every != null) {
            // The harness anchors every series at its startAt, so this is only asked for t = startAt or later grid points.
            long n = Math.max(0, ceilDiv(Duration.between(startAt, t).toMillis(), every.toMillis()));
            return startAt.plus(every.multipliedBy(n));
        }
        int[] fs = secondsField();
        // Whole seconds only: a cron names whole seconds, so a t with a fraction has its first candidate at the next second.
        Instant s = t.truncatedTo(ChronoUnit.SECONDS);
        if (s.isBefore(t)) {
            s = s.plusSeconds(1);
        }
        for (int i = 0; i <= 60; i++, s = s.plusSeconds(1)) {
            int sec = ZonedDateTime.ofInstant(s, zone).getSecond();
            if (sec >= fs[0] && (sec - fs[0]) % fs[1] == 0) {
                return s;
            }
        }
        throw new IllegalStateException("no second in a minute matches " + cron);
    }

    /** The rule's last occurrence at or before {@code t} (at or after startAt), or null if there is none. */
    public Instant atOrBefore(Instant t) {
        Instant first = firstAtOrAfter(startAt);
        if (t.isBefore(first)) {
            return null;
        }
        if (every != null) {
            long n = Math.floorDiv(Duration.between(startAt, t).toMillis(), every.toMillis());
            return startAt.plus(every.multipliedBy(n));
        }
        Instant s = t.truncatedTo(ChronoUnit.SECONDS);
        for (int i = 0; i <= 60; i++, s = s.minusSeconds(1)) {
            if (!s.isBefore(first) && firstAtOrAfter(s).equals(s)) {
                return s;
            }
        }
        throw new IllegalStateException("no second in a minute matches " + cron);
    }

    /** The rule's next occurrence strictly after {@code o} within endAt, or null past it (maxOccurrences aside). */
    public Instant nextInWindow(Instant o) {
        Instant n = nextAfter(o);
        return endAt != null && n.isAfter(endAt) ? null : n;
    }

    /** The rule's next occurrence strictly after {@code o}. */
    public Instant nextAfter(Instant o) {
        if (every != null) {
            return firstAtOrAfter(o.plusMillis(1));
        }
        return firstAtOrAfter(o.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1));
    }

    /** Whether {@code t} is an instant the rule names at or after startAt (a fire off the rule is not). */
    public boolean onRule(Instant t) {
        return !t.isBefore(startAt) && firstAtOrAfter(t).equals(t);
    }

    /** A series under catchUp {@code all}; see below. */
    public static Series of(String txn, String cron, ZoneId zone, Duration every, Instant startAt, Instant endAt, Integer maxOccurrences) {
        return of(txn, cron, zone, every, startAt, endAt, maxOccurrences, "all");
    }

    /** A series and its occurrences from startAt, ended by maxOccurrences or endAt, as docs/recurring.md defines them. */
    public static Series of(String txn, String cron, ZoneId zone, Duration every, Instant startAt, Instant endAt, Integer maxOccurrences,
                            String catchUp) {
        Series rule = new Series(txn, cron, zone, every, startAt, endAt, maxOccurrences, catchUp, List.of());
        List<Instant> out = new ArrayList<>();
        Instant o = rule.firstAtOrAfter(rule.startAt);
        while ((maxOccurrences == null || out.size() < maxOccurrences) && (endAt == null || !o.isAfter(endAt))) {
            out.add(o);
            o = rule.nextAfter(o);
        }
        return new Series(txn, cron, zone, every, startAt, endAt, maxOccurrences, catchUp, out);
    }

    /** The occurrence after {@code Oi} in the series, or null when Oi is the last (the fired event's {@code next}). */
    public Instant expectedNext(int index) {
        return index + 1 < occurrences.size() ? occurrences.get(index + 1) : null;
    }

    public String rule() {
        return (cron != null ? "cron '" + cron + "' " + zone : "every " + every) + " from " + startAt
                + (endAt != null ? " to " + endAt : "") + (maxOccurrences != null ? " max " + maxOccurrences : "") + ", catchUp " + catchUp;
    }

    private int[] secondsField() {
        String f = cron.substring(0, cron.indexOf(' '));
        String[] p = f.split("/");
        return new int[] {"*".equals(p[0]) ? 0 : Integer.parseInt(p[0]), Integer.parseInt(p[1])};
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }
}
