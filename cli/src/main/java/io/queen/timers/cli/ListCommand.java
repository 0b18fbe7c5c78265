package io.queen.timers.cli;

import io.queen.timers.core.text.Printable;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.inspect.TimerInspector;
import io.queen.timers.inspect.TimerSummary;
import java.io.PrintWriter;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** A queue's pending timers by key, one page at a time (keyset: --after the last key shown). */
@Command(name = "list", mixinStandardHelpOptions = true,
        description = {"List a queue's pending timers, one page at a time.",
            "Key order, no payloads. The next page starts --after the last key printed.",
            "A recurring timer's line ends with its rule, the series' txn and the pending occurrence's number",
            "(its delivery time and txn are that occurrence's)."},
        footer = {"", "Example:", "  queen-timers list -q orders.reminders --limit 50",
            "  queen-timers list -q orders.reminders --limit 50 --after order-49"})
final class ListCommand implements Callable<Integer> {

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;
    @Mixin DatabaseOptions db;
    @Mixin QueueOptions queue;
    @Mixin Output output;

    @Option(names = "--after", paramLabel = "TIMER_KEY", description = "Start after this key (the last key of the previous page).")
    String after;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "100",
            description = "Timers per page, 1.." + TimerInspector.MAX_PAGE + " (default: ${DEFAULT-VALUE}).")
    int limit;

    @Override
    public Integer call() throws SQLException {
        if (limit < 1 || limit > TimerInspector.MAX_PAGE) {
            throw new UserError("--limit " + limit + " is out of range: allowed 1.." + TimerInspector.MAX_PAGE);
        }
        List<TimerSummary> page;
        try (HikariDataSource ds = db.open(root.env(), SessionTimeouts.OPERATOR.named("queen-list"))) {
            page = new TimerInspector(ds).list(queue.tenant, queue.queue, after, limit);
        }
        PrintWriter out = spec.commandLine().getOut();
        for (TimerSummary t : page) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("timerKey", t.timerKey());
            f.put("state", t.state().name().toLowerCase(Locale.ROOT));
            f.put("deliverAt", t.deliverAt().toString());
            f.put("partition", t.partition());
            f.put("txn", t.txn());
            f.put("attempts", t.attempts());
            f.put("lastError", t.lastError());
            f.put("payloadBytes", t.payloadBytes());
            f.put("recurring", t.recurring() == null ? null : t.recurring().fields(t.deliverAt()));
            output.print(out, String.format("%-30s %-8s %s  partition %s  txn %s  attempts %d%s%s", Printable.line(t.timerKey()),
                    f.get("state"), t.deliverAt(), Printable.line(t.partition()), Printable.line(t.txn()), t.attempts(),
                    t.lastError() == null ? "" : "  last error " + Printable.line(t.lastError()),
                    t.recurring() == null ? "" : "  " + t.recurring().text(t.deliverAt())), f);
        }
        if (!output.json()) {
            if (page.isEmpty()) {
                out.println("no pending timers in " + Printable.line(queue.queue) + (after == null ? "" : " after " + Printable.line(after)));
            } else if (page.size() == limit) {
                out.println("-- more: --after " + Printable.line(page.get(page.size() - 1).timerKey()));
            }
            out.flush();
        }
        return 0;
    }
}
