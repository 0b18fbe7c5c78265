package io.queen.timers.cli;

import io.queen.timers.core.text.Printable;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.bridge.crypto.PayloadCipher;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.log.read.LogMessage;
import io.queen.timers.log.read.LogReader;
import io.queen.timers.log.read.PartitionInfo;
import java.io.PrintWriter;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** Decodes a queue partition's log from an offset; with --follow, keeps polling for new messages. */
@Command(name = "tail", mixinStandardHelpOptions = true,
        description = {"Decode a queue's log from an offset; --follow for more.",
            "One line per message (partition@offset, time, txn, message id, payload). --follow keeps reading",
            "as messages arrive, until Ctrl-C."},
        footer = {"", "Examples:", "  queen-timers tail -q orders.reminders --from 0",
            "  queen-timers tail -q orders.reminders --last 10 --follow"})
final class TailCommand implements Callable<Integer> {

    private static final int PAGE = 500;

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;
    @Mixin DatabaseOptions db;
    @Mixin QueueOptions queue;
    @Mixin Output output;
    @Mixin EncryptionOptions encryption;

    @Option(names = "--partition", paramLabel = "NAME", defaultValue = "Default", description = "Partition of the queue (default: ${DEFAULT-VALUE}).")
    String partition;

    @Option(names = "--from", paramLabel = "OFFSET", description = "First offset to print (default: 0, or see --last).")
    Long from;

    @Option(names = "--last", paramLabel = "N", description = "Start N messages before the end instead.")
    Integer last;

    @Option(names = {"-f", "--follow"}, description = "Keep reading new messages until interrupted.")
    boolean follow;

    @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "1s", description = "How often --follow looks for new messages (default: ${DEFAULT-VALUE}).")
    String interval;

    @Override
    public Integer call() throws SQLException, InterruptedException {
        Duration every = ConfigDef.parseDuration(interval);
        PrintWriter out = spec.commandLine().getOut();
        Optional<PayloadCipher> cipher = encryption.cipher(root.env(), db.config);
        try (HikariDataSource ds = db.open(root.env(), SessionTimeouts.OPERATOR.named("queen-tail"))) {
            LogReader reader = new LogReader(ds);
            long next = start(reader);
            if (next < 0 && !follow) {
                spec.commandLine().getErr().println("queue " + Printable.line(queue.queue) + " has no partition " + Printable.line(partition)
                        + " (yet): nothing was fired into it");
                return QueenTimers.EXIT_NOT_FOUND;
            }
            next = Math.max(0, next);
            while (true) {
                List<LogMessage> page = reader.read(queue.tenant, queue.queue, partition, next, PAGE);
                for (LogMessage m : page) {
                    print(out, m, cipher);
                    next = m.offset() + 1;
                }
                if (page.size() == PAGE) {
                    continue;
                }
                if (!follow) {
                    return 0;
                }
                Thread.sleep(every.toMillis());
            }
        }
    }

    /** The first offset to read, or -1 when the partition does not exist. */
    private long start(LogReader reader) throws SQLException {
        if (last == null) {
            return from == null ? 0 : from;
        }
        return reader.partitions(queue.tenant, queue.queue).stream().filter(p -> p.name().equals(partition))
                .mapToLong(PartitionInfo::lastOffset).map(end -> Math.max(0, end - last + 1)).findFirst().orElse(-1);
    }

    /** One message; an encrypted payload (frame flag 4) is opened when a key is given, else shown as encrypted. */
    private void print(PrintWriter out, LogMessage m, Optional<PayloadCipher> cipher) {
        String payload = m.frame().encrypted() ? EncryptionOptions.show(m.payload(), cipher) : m.payloadText();
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("partition", m.partition());
        f.put("offset", m.offset());
        f.put("createdAt", m.createdAt().toString());
        f.put("txn", m.txn());
        f.put("messageId", m.messageId().toString());
        f.put("payload", payload);
        f.put("encrypted", m.frame().encrypted());
        if (m.producerSub() != null) {
            f.put("producerSub", m.producerSub());
        }
        output.print(out, Printable.line(m.partition()) + "@" + m.offset() + "  " + m.createdAt() + "  txn " + Printable.line(m.txn())
                + "  message " + m.messageId() + (m.producerSub() == null ? "" : "  sub " + Printable.line(m.producerSub()))
                + "  " + Printable.line(payload), f);
    }
}
