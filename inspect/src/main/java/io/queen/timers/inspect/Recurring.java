package io.queen.timers.inspect;

import io.queen.timers.core.recur.Recurrence;
import io.queen.timers.core.text.Printable;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A recurring timer's rule as list, peek and find show it (docs/recurring.md): the rule in one line
 * ({@link Recurrence#describe()}), the series' txn and the number of the pending occurrence; the row's
 * deliver_at is that occurrence's instant and its txn {@code <seriesTxn>@<instant>}. {@code stored} is
 * queen.log_timers.recurrence as the database holds it.
 */
public record Recurring(String rule, String seriesTxn, int seq, String stored) {

    /** Null for a one-shot timer (recurrence NULL). */
    static Recurring of(String stored) {
        if (stored == null) {
            return null;
        }
        try {
            Recurrence.Stored s = Recurrence.fromJson(stored);
            String rule = s.rule().describe() + (s.isStopped() ? "; stopped (" + s.stopped() + "): ends with this occurrence" : "");
            return new Recurring(rule, s.rule().txn(), s.seq(), stored);
        } catch (RuntimeException e) {
            // the bridge only stores rules it read; should one not read, the inspection tools still show
            // the row (with what is wrong) instead of failing the whole page
            return new Recurring("unreadable rule (" + e.getMessage() + "): " + stored, null, 0, stored);
        }
    }

    /**
     * Up to {@code n} occurrences from the pending one ({@code nextOccurrence}) on, within the rule's window and
     * maxOccurrences (only the pending one when a too_late cancel stopped the series); empty for an unreadable rule.
     */
    public List<Instant> upcoming(Instant nextOccurrence, int n) {
        try {
            Recurrence.Stored s = Recurrence.fromJson(stored);
            // a stopped series' pending occurrence is its last (too_late cancel, docs/recurring.md)
            return s.rule().upcoming(nextOccurrence, seq, s.isStopped() ? Math.min(n, 1) : n);
        } catch (RuntimeException e) {
            return List.of();
        }
    }

    /** One line for people: the rule, the series' txn, the pending occurrence's number and instant. */
    public String text(Instant nextOccurrence) {
        return "recurring " + Printable.line(rule) + "  series txn " + (seriesTxn == null ? "-" : Printable.line(seriesTxn))
                + "  next occurrence #" + seq + " at " + nextOccurrence;
    }

    /** The JSON fields list, peek and find print ({@code nextOccurrence}: the pending occurrence's instant). */
    public Map<String, Object> fields(Instant nextOccurrence) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("rule", rule);
        f.put("seriesTxn", seriesTxn);
        f.put("seq", seq);
        f.put("nextOccurrence", nextOccurrence.toString());
        return f;
    }
}
