package io.queen.timers.cli;

import io.queen.timers.core.text.Printable;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.log.read.LogReader;
import io.queen.timers.log.read.TxnHit;
import java.io.PrintWriter;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** "Was it sent?": where a txn appears in a queue's log. The log is the authority, not the timer table. */
@Command(name = "find", mixinStandardHelpOptions = true,
        description = {"Was it sent? Find a txn in a queue's log.",
            "Prints where it is (partition, offset, message id, time). Exit code 0 when found, 3 when not.",
            "A cancel that answered `absent` may have come after the fire: this is how to tell."},
        footer = {"", "Example:", "  queen-timers find -q orders.reminders --txn remind-42"})
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
        try (HikariDataSource ds = db.open(root.env(), SessionTimeouts.OPERATOR.named("queen-find"))) {
            hits = new LogReader(ds).find(queue.tenant, queue.queue, txn);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (output.json()) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("queue", queue.queue);
            f.put("txn", txn);
            f.put("found", !hits.isEmpty());
            f.put("hits", hits.stream().map(h -> Map.of("partition", h.partition(), "offset", h.offset(),
                    "messageId", h.messageId().toString(), "createdAt", h.createdAt().toString())).toList());
            output.print(out, "", f);
        } else if (hits.isEmpty()) {
            out.println("not sent: no message with txn " + Printable.line(txn) + " in " + Printable.line(queue.queue)
                    + " (still pending? `queen-timers list -q " + Printable.line(queue.queue) + "`)");
        } else {
            for (TxnHit h : hits) {
                out.println("sent: " + Printable.line(queue.queue) + " partition " + Printable.line(h.partition()) + " offset " + h.offset()
                        + "  message " + h.messageId() + "  at " + h.createdAt());
            }
        }
        out.flush();
        return hits.isEmpty() ? QueenTimers.EXIT_NOT_FOUND : 0;
    }
}
