package io.queen.timers.cli;

import io.queen.timers.core.text.Printable;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.inspect.TimerInspector;
import io.queen.timers.inspect.TimerView;
import io.queen.timers.log.codec.CodecException;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.bridge.crypto.PayloadCipher;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** One pending timer, as the staging table holds it. */
@Command(name = "peek", mixinStandardHelpOptions = true,
        description = {"Show one pending timer.",
            "State (waiting, due, claimed, backoff), delivery time, txn, message id, attempts, last error,",
            "lease, payload; for a recurring timer also its rule, the series' txn and the pending",
            "occurrence (its number; the delivery time is its instant). Exit code 3 when it is not pending",
            "(never scheduled, cancelled, or already fired: `queen-timers find` asks the log)."},
        footer = {"", "Example:", "  queen-timers peek -q orders.reminders -k order-42"})
final class PeekCommand implements Callable<Integer> {

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;
    @Mixin DatabaseOptions db;
    @Mixin QueueOptions queue;
    @Mixin Output output;
    @Mixin EncryptionOptions encryption;

    @Option(names = {"-k", "--key"}, required = true, paramLabel = "TIMER_KEY", description = "The timer's key.")
    String timerKey;

    @Override
    public Integer call() throws SQLException {
        Optional<TimerView> found;
        try (HikariDataSource ds = db.open(root.env(), SessionTimeouts.OPERATOR.named("queen-peek"))) {
            found = new TimerInspector(ds).peek(queue.tenant, queue.queue, timerKey);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (found.isEmpty()) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("queue", queue.queue);
            f.put("timerKey", timerKey);
            f.put("pending", false);
            output.print(out, "not pending: " + Printable.line(queue.queue) + "/" + Printable.line(timerKey)
                    + " (never scheduled, cancelled, or already fired: `queen-timers find -q " + Printable.line(queue.queue) + " --txn <txn>`)", f);
            return QueenTimers.EXIT_NOT_FOUND;
        }
        TimerView t = found.get();
        String payload = payloadText(t, t.encrypted() ? encryption.cipher(root.env(), db.config) : Optional.empty());
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("queue", t.queue());
        f.put("timerKey", t.timerKey());
        f.put("pending", true);
        f.put("state", t.state().name().toLowerCase(java.util.Locale.ROOT));
        f.put("partition", t.partition());
        f.put("deliverAt", t.deliverAt().toString());
        f.put("visibleAt", t.visibleAt().toString());
        f.put("txn", t.txn());
        f.put("messageId", t.messageId().toString());
        f.put("attempts", t.attempts());
        f.put("lastError", t.lastError());
        f.put("claimedUntil", t.claimedUntil() == null ? null : t.claimedUntil().toString());
        f.put("payload", payload);
        f.put("payloadZstd", t.payloadZstd());
        f.put("encrypted", t.encrypted());
        f.put("recurring", t.recurring() == null ? null : t.recurring().fields(t.deliverAt()));
        Duration in = Duration.between(t.dbNow(), t.deliverAt());
        output.print(out, String.join("\n",
                Printable.line(t.queue()) + "/" + Printable.line(t.timerKey()) + "  " + f.get("state") + "  deliver at " + t.deliverAt()
                        + (in.isNegative() ? " (" + human(in.negated()) + " ago)" : " (in " + human(in) + ")"),
                "  partition " + Printable.line(t.partition()) + "  txn " + Printable.line(t.txn()) + "  message " + t.messageId(),
                "  attempts " + t.attempts() + "  last error " + (t.lastError() == null ? "-" : Printable.line(t.lastError()))
                        + "  claimed until " + (t.claimedUntil() == null ? "-" : t.claimedUntil()),
                "  payload " + Printable.line(payload))
                + (t.recurring() == null ? "" : "\n  " + t.recurring().text(t.deliverAt())), f);
        return 0;
    }

    /** The payload as text: decompressed when stored zstd (bounded like a segment), then opened when encrypted and a key is given. */
    private static String payloadText(TimerView t, Optional<PayloadCipher> cipher) {
        return payloadText(t, cipher, Frame.MAX_PAYLOAD_BYTES);
    }

    static String payloadText(TimerView t, Optional<PayloadCipher> cipher, int maxBytes) {
        byte[] bytes;
        try {
            bytes = t.payloadBytes(maxBytes);
        } catch (CodecException e) {
            return "(zstd payload that does not decompress: " + e.getMessage() + ")";
        }
        return t.encrypted() ? EncryptionOptions.show(bytes, cipher) : new String(bytes, StandardCharsets.UTF_8);
    }

    static String human(Duration d) {
        long s = d.toSeconds();
        if (s < 120) {
            return s + "s";
        }
        if (s < 7200) {
            return (s / 60) + "m" + (s % 60) + "s";
        }
        if (s < 172_800) {
            return (s / 3600) + "h" + (s % 3600 / 60) + "m";
        }
        return (s / 86_400) + "d" + (s % 86_400 / 3600) + "h";
    }
}
