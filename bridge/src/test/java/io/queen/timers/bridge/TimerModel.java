package io.queen.timers.bridge;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The specification the bridge is checked against: commands applied one at a time, in order, exactly
 * once, with no sweeper (so nothing is ever in somebody's hands). Yields the expected table and the
 * expected verdict of every command.
 */
final class TimerModel {

    enum Kind { SCHEDULE, RESCHEDULE, CANCEL }

    record Cmd(Kind kind, String queue, String key, Instant deliverAt, String txn, String payload) {}

    record Row(Instant deliverAt, String txn, String payload) {}

    private final Map<String, Row> table = new TreeMap<>();
    private final List<String> verdicts = new ArrayList<>();

    static TimerModel of(List<Cmd> commands) {
        TimerModel m = new TimerModel();
        commands.forEach(m::apply);
        return m;
    }

    private void apply(Cmd c) {
        String id = c.queue() + "/" + c.key();
        if (c.kind() == Kind.CANCEL) {
            verdicts.add(table.remove(id) != null ? "cancelled" : "absent");
        } else {
            verdicts.add(table.put(id, new Row(c.deliverAt(), c.txn(), c.payload())) == null ? "scheduled" : "rescheduled");
        }
    }

    /** queue/key → row. */
    Map<String, Row> table() {
        return new HashMap<>(table);
    }

    /** The verdict of the i-th command. */
    String verdict(int i) {
        return verdicts.get(i);
    }
}
