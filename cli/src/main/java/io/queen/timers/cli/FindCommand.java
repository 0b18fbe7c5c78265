package io.queen.timers.cli;

import io.queen.timers.core.text.Printable;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.inspect.PendingSeries;
import io.queen.timers.inspect.TimerInspector;
import io.queen.timers.log.read.TxnHit;
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

/**
 * "Was it sent?": where a txn appears in a queue's log. The log is the authority, not the timer table. A
 * recurring timer's occurrences are sent each with its own txn ({@code <series txn>@<instant>}), so the
 * answer is per occurrence; the series' own txn is never in the log, and for it the command shows the
 * pending series instead (queen.timer_series_v1).
 */
@Command(name = "find", mixinStandardHelpOptions = true,
        description = {"Was it sent? Find a txn in a queue's log.",
            "Prints where it is (partition, offset, message id, time). Exit code 0 when found, 3 when not.",
            "A cancel that answered `absent` may have come after the fire: this is how to tell.",
            "Recurring timers: each occurrence is sent with its own txn, <txn>@<instant> (UTC, as the audit",
            "events' `occurrence`): ask for that txn. Given the series' txn itself, it also prints the pending",
            "series (key, rule, next occurrence and its txn) and exits 0 while the series is pending; once the",
            "series ended or was cancelled, 3 (unless a message has that very txn)."},
        footer = {"", "Example:", "  queen-timers find -q orders.reminders --txn remind-42",
            "  queen-timers find -q reports --txn nightly@2026-03-08T01:30:00Z"})
final class FindCommand implements Callable<Integer> {

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;
    @Mixin DatabaseOptions db;
    @Mixin QueueOptions queue;
    @Mixin Output output;

    @Option(names = "--txn", required = true, paramLabel = "TXN", description = "The transaction id the timer was scheduled with.")
    String txn;

    @Override
    public Integer call() throws SQLException {
        List<TxnHit> hits;
        List<PendingSeries> series;
        try (HikariDataSource ds = db.open(root.env(), SessionTimeouts.OPERATOR.named("queen-find"))) {
            TimerInspector.Finding found = new TimerInspector(ds).find(queue.tenant, queue.queue, txn);
            hits = found.hits();
            series = found.series();
        }
        PrintWriter out = spec.commandLine().getOut();
        if (output.json()) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("queue", queue.queue);
            f.put("txn", txn);
            f.put("found", !hits.isEmpty());
            f.put("hits", hits.stream().map(h -> Map.of("partition", h.partition(), "offset", h.offset(),
                    "messageId", h.messageId().toString(), "createdAt", h.createdAt().toString())).toList());
            f.put("series", series.stream().map(FindCommand::seriesFields).toList());
            output.print(out, "", f);
        } else {
            if (hits.isEmpty() && series.isEmpty()) {
                out.println("not sent: no message with txn " + Printable.line(txn) + " in " + Printable.line(queue.queue)
                        + " (still pending? `queen-timers list -q " + Printable.line(queue.queue) + "`; a recurring timer's"
                        + " occurrences are sent as <txn>@<instant>)");
            } else if (hits.isEmpty()) {
                out.println("not sent as such: " + Printable.line(txn) + " names a recurring series; each occurrence is sent with"
                        + " its own txn, " + Printable.line(txn) + "@<instant>");
            }
            for (TxnHit h : hits) {
                out.println("sent: " + Printable.line(queue.queue) + " partition " + Printable.line(h.partition()) + " offset " + h.offset()
                        + "  message " + h.messageId() + "  at " + h.createdAt());
            }
            for (PendingSeries s : series) {
                out.println("series: " + Printable.line(queue.queue) + "/" + Printable.line(s.timerKey()) + "  "
                        + s.state().name().toLowerCase(Locale.ROOT) + "  " + s.recurring().text(s.nextOccurrence())
                        + "  txn " + Printable.line(s.txn()));
            }
        }
        out.flush();
        // a pending series is an answer too: the txn is known, and what it names is not sent yet by design
        return hits.isEmpty() && series.isEmpty() ? QueenTimers.EXIT_NOT_FOUND : 0;
    }

    private static Map<String, Object> seriesFields(PendingSeries s) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("timerKey", s.timerKey());
        f.put("state", s.state().name().toLowerCase(Locale.ROOT));
        f.put("txn", s.txn());
        f.putAll(s.recurring().fields(s.nextOccurrence()));
        return f;
    }
}
