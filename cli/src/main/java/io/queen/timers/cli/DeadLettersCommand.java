package io.queen.timers.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.command.TraceParent;
import io.queen.timers.client.verdict.CommandSender;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.core.text.Printable;
import io.queen.timers.log.codec.TxnHash;
import io.queen.timers.log.read.LogReader;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.RecordMetadata;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * The sweeper's dead letters (queen.log_dlq rows of consumer group {@code __timer__}): list, show, replay through the
 * command topic, drop. Reads and removals go through queen.timer_dead_letters_v1 and queen.timer_dead_letter_remove_v1
 * (R__timer_dead_letters.sql), which write the {@code dead_letter_removed} audit event.
 */
@Command(name = "dead-letters", mixinStandardHelpOptions = true,
        description = {"The timers the sweeper gave up on (queen.log_dlq): list, show, replay, drop.",
            "A dead letter is a message that was never delivered. replay schedules it again through the command topic",
            "(a verdict and an audit trail like any command) and removes it once the database sees the timer staged or fired;",
            "drop gives it up. Both write a dead_letter_removed audit event with your reason."},
        subcommands = {DeadLettersCommand.ListLetters.class, DeadLettersCommand.Show.class, DeadLettersCommand.Replay.class,
            DeadLettersCommand.Drop.class})
final class DeadLettersCommand implements Runnable {

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** One row of queen.timer_dead_letters_v1. */
    record Letter(UUID id, UUID tenant, String queue, String partition, String timerKey, String txn, UUID messageId,
                  String payload, String error, int attempts, Instant failedAt) {

        Map<String, Object> fields() {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("id", id.toString());
            f.put("tenant", tenant.toString());
            f.put("queue", queue);
            f.put("partition", partition);
            f.put("timerKey", timerKey);
            f.put("txn", txn);
            f.put("messageId", messageId == null ? null : messageId.toString());
            f.put("error", error);
            f.put("attempts", attempts);
            f.put("failedAt", failedAt.toString());
            return f;
        }

        String line() {
            return id + "  " + failedAt + "  " + Printable.line(queue) + "/" + (timerKey == null ? "(key not recorded)" : Printable.line(timerKey))
                    + "  partition " + Printable.line(partition) + "  txn " + Printable.line(String.valueOf(txn)) + "  attempts " + attempts
                    + "  error " + Printable.line(String.valueOf(error));
        }

        /** Whether a command can carry the payload: JSON as kept, or a clear zstd payload that decompresses to JSON. */
        boolean payloadIsJson() {
            return commandPayload() != null;
        }

        /**
         * The payload as a command carries it (JSON text), or null when none can: kept as base64 (not JSON, or
         * encrypted). The sweeper's dead-letter keeps a compressed payload as the row stored it (V130: the database
         * keeps the row's payload, never bytes the caller passes, and cannot decompress zstd), so it is decompressed
         * here, bounded by the log's frame limit.
         */
        String commandPayload() {
            JsonNode p = json(payload);
            boolean lossless = p != null && p.isObject() && p.size() == 3 && p.has("encoding") && p.has("encrypted") && p.has("data");
            if (!lossless) {
                return payload;
            }
            if (!"zstd+base64".equals(p.get("encoding").asText()) || p.get("encrypted").asBoolean()) {
                return null;
            }
            try {
                byte[] raw = io.queen.timers.log.codec.Compression.decompress(java.util.Base64.getDecoder().decode(p.get("data").asText()),
                        io.queen.timers.log.codec.Frame.MAX_PAYLOAD_BYTES);
                String text = new String(raw, java.nio.charset.StandardCharsets.UTF_8);
                return Output.mapper().readTree(text) != null ? text : null;
            } catch (RuntimeException | java.io.IOException e) {
                return null; // not one zstd frame, too large, or not JSON: kept, not replayable
            }
        }
    }

    static List<Letter> read(DataSource ds, UUID tenant, String queue, UUID id, int limit) throws SQLException {
        List<Letter> out = new ArrayList<>();
        try (Connection c = ds.getConnection();
                PreparedStatement st = c.prepareStatement("SELECT id, tenant_id, queue, \"partition\", timer_key, txn, message_id, payload::text,"
                        + " error, attempts, failed_at FROM queen.timer_dead_letters_v1(?, ?, ?, ?)")) {
            st.setObject(1, tenant, Types.OTHER);
            st.setString(2, queue);
            st.setObject(3, id, Types.OTHER);
            st.setInt(4, limit);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(new Letter(rs.getObject(1, UUID.class), rs.getObject(2, UUID.class), rs.getString(3), rs.getString(4),
                            rs.getString(5), rs.getString(6), rs.getObject(7, UUID.class), rs.getString(8), rs.getString(9), rs.getInt(10),
                            rs.getTimestamp(11).toInstant()));
                }
            }
        }
        return out;
    }

    static JsonNode json(String text) {
        try {
            return text == null ? null : Output.mapper().readTree(text);
        } catch (Exception e) {
            return null;
        }
    }

    /** What queen.timer_dead_letter_remove_v1 answered: the removal's tenant, queue, key and (replay) what it saw. */
    record Removed(UUID tenant, String queue, String timerKey, String state) {}

    static Removed remove(DataSource ds, UUID id, String how, String reason, String key, String txn, UUID verdictEvent,
                          TraceParent trace, String command) throws SQLException {
        try (Connection c = ds.getConnection();
                PreparedStatement st = c.prepareStatement("SELECT tenant_id, queue, timer_key, state"
                        + " FROM queen.timer_dead_letter_remove_v1(?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            st.setObject(1, id, Types.OTHER);
            st.setString(2, how);
            st.setString(3, reason);
            st.setString(4, key);
            st.setBytes(5, txn == null ? null : TxnHash.of(txn));
            st.setObject(6, verdictEvent, Types.OTHER);
            st.setString(7, trace == null ? null : trace.traceId());
            st.setString(8, trace == null ? null : trace.spanId());
            st.setString(9, clientLabel(command));
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return new Removed(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3), rs.getString(4));
            }
        } catch (SQLException e) {
            // the database's answers an operator acts on: gone already (P0002), refused (55000), a bad argument (22023)
            if ("P0002".equals(e.getSQLState()) || "55000".equals(e.getSQLState()) || "22023".equals(e.getSQLState())) {
                String m = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
                throw new UserError(m.startsWith("ERROR: ") ? m.substring("ERROR: ".length()) : m);
            }
            throw e;
        }
    }

    /** The client's own claim of who runs it, kept beside the actor the database records. */
    static String clientLabel(String command) {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "unknown-host";
        }
        return System.getProperty("user.name", "unknown") + "@" + host + " (queen-timers dead-letters " + command + ")";
    }

    static Letter one(DataSource ds, UUID id) throws SQLException {
        List<Letter> l = read(ds, null, null, id, 1);
        return l.isEmpty() ? null : l.get(0);
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = {"The sweeper's dead letters, oldest first: id, when, queue/key, partition, txn, attempts, last error."},
            footer = {"", "Example:", "  queen-timers dead-letters list -q orders.reminders"})
    static final class ListLetters implements Callable<Integer> {
        @ParentCommand DeadLettersCommand parent;
        @Spec CommandSpec spec;
        @Mixin DatabaseOptions db;
        @Mixin Output output;

        @Option(names = {"-q", "--queue"}, paramLabel = "QUEUE", description = "Only this queue's.")
        String queue;

        @Option(names = "--tenant", paramLabel = "UUID", description = "Only this tenant's (default: every tenant's).")
        UUID tenant;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "100", description = "At most N (1..1000, default: ${DEFAULT-VALUE}).")
        int limit;

        @Override
        public Integer call() throws SQLException {
            List<Letter> letters;
            try (HikariDataSource ds = db.open(parent.root.env(), SessionTimeouts.OPERATOR.named("queen-dead-letters"))) {
                letters = read(ds, tenant, queue, null, limit);
            }
            PrintWriter out = spec.commandLine().getOut();
            for (Letter l : letters) {
                output.print(out, l.line(), l.fields());
            }
            if (letters.isEmpty() && !output.json()) {
                out.println("no dead letters");
                out.flush();
            }
            return 0;
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true,
            description = {"One dead letter with its payload. Exit code 3 when there is none with that id."},
            footer = {"", "Example:", "  queen-timers dead-letters show 4f1c...e2"})
    static final class Show implements Callable<Integer> {
        @ParentCommand DeadLettersCommand parent;
        @Spec CommandSpec spec;
        @Mixin DatabaseOptions db;
        @Mixin Output output;

        @Parameters(index = "0", paramLabel = "ID", description = "The dead letter's id (see list).")
        UUID id;

        @Override
        public Integer call() throws SQLException {
            Letter l;
            try (HikariDataSource ds = db.open(parent.root.env(), SessionTimeouts.OPERATOR.named("queen-dead-letters"))) {
                l = one(ds, id);
            }
            if (l == null) {
                spec.commandLine().getErr().println("no dead letter " + id);
                return QueenTimers.EXIT_NOT_FOUND;
            }
            Map<String, Object> f = l.fields();
            f.put("payload", json(l.payload()));
            f.put("replayable", l.payloadIsJson() && l.timerKey() != null);
            output.print(spec.commandLine().getOut(), l.line() + "\npayload " + Printable.line(String.valueOf(l.payload())), f);
            return 0;
        }
    }

    /**
     * Schedules a dead letter again through the command topic, then removes it once the database sees the timer.
     *
     * <p>Exactly-once rule: the dead letter is removed only by queen.timer_dead_letter_remove_v1, which checks that the timer
     * is staged again with the txn or that the txn is in its partition's log since the dead letter; a command that got no
     * verdict, or a refusal, leaves it. A second run first looks for that same evidence and, if it is there (the first run
     * lost its verdict or crashed after the send), removes the dead letter without sending again. The one window left: a
     * second run while the first command is still unapplied on the topic (a bridge lagging longer than --wait) sends it
     * again; if the first fired in between, the message is delivered twice, with the same txn.
     */
    @Command(name = "replay", mixinStandardHelpOptions = true,
            description = {"Schedule a dead letter again through the command topic, then remove it once its verdict is in.",
                "The command carries the dead letter's queue, key, partition, txn and payload, and a fresh W3C traceparent; the",
                "verdict (scheduled) and the dead_letter_removed event (with your reason and the verdict's eventId) carry that trace.",
                "The dead letter stays unless the database sees the timer staged again with its txn, or its txn in the log since:",
                "no verdict, a refusal or a lost command never remove it. Run it again after a lost verdict: it sends nothing twice",
                "when the timer is already staged or fired. Refused: a payload kept as base64 (not JSON, or encrypted), and a key",
                "that now holds another pending timer."},
            footer = {"", "Example:", "  queen-timers dead-letters replay 4f1c...e2 --reason 'downstream fixed (INC-1234)'"})
    static final class Replay implements Callable<Integer> {
        @ParentCommand DeadLettersCommand parent;
        @Spec CommandSpec spec;
        @Mixin DatabaseOptions db;
        @Mixin KafkaOptions kafka;
        @Mixin Output output;

        @Parameters(index = "0", paramLabel = "ID", description = "The dead letter's id (see list).")
        UUID id;

        @Option(names = "--reason", required = true, paramLabel = "TEXT", description = "Why: written into the dead_letter_removed audit event.")
        String reason;

        @Option(names = {"-k", "--key"}, paramLabel = "TIMER_KEY",
                description = "The timer key, for a dead letter written before its key was recorded (from its dead_lettered event).")
        String key;

        @Option(names = {"-t", "--topic"}, paramLabel = "TOPIC",
                description = "Command topic of the dead letter's tenant, when its bridges registered several (queen.bridge_topics);"
                        + " a topic registered for another tenant, or for none, is refused.")
        String topic;

        @Option(names = "--audit-topic", paramLabel = "TOPIC", description = "Where the verdict comes (else the dead letter's tenant's audit topic from the settings).")
        String auditTopic;

        @Option(names = "--delay", paramLabel = "DURATION", defaultValue = "0s", description = "Fire this long after the command (default: ${DEFAULT-VALUE}).")
        String delay;

        @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "30s", description = "How long to wait for the verdict (default: ${DEFAULT-VALUE}).")
        String wait;

        @Option(names = "--token", paramLabel = "JWT", description = "Producer token for a topic with topic.<name>.auth=jwt (else "
                + CommandTarget.AUTH_TOKEN_ENV + ").")
        String token;

        @Override
        public Integer call() throws SQLException {
            if (reason.isBlank()) {
                throw new UserError("--reason must say why the dead letter is replayed");
            }
            Duration delayBy = duration("--delay", delay);
            Duration waitFor = duration("--wait", wait);
            Map<String, String> env = parent.root.env();
            PrintWriter out = spec.commandLine().getOut();
            try (HikariDataSource ds = db.open(env, SessionTimeouts.OPERATOR.named("queen-dead-letters"))) {
                Letter l = one(ds, id);
                if (l == null) {
                    spec.commandLine().getErr().println("no dead letter " + id);
                    return QueenTimers.EXIT_NOT_FOUND;
                }
                String timerKey = l.timerKey() != null ? l.timerKey() : key;
                if (timerKey == null) {
                    throw new UserError("dead letter " + id + " has no recorded timer key (dead-lettered before V128): name it with --key"
                            + " (the timerKey of its dead_lettered event)");
                }
                if (l.timerKey() != null && key != null && !l.timerKey().equals(key)) {
                    throw new UserError("dead letter " + id + " is timer " + l.queue() + "/" + l.timerKey() + ", not " + key);
                }
                if (!l.payloadIsJson()) {
                    throw new UserError("dead letter " + id + " keeps its payload as " + json(l.payload()).get("encoding").asText()
                            + " (not JSON, or encrypted): a command carries JSON only, so it cannot be replayed; drop it and have its producer send it again");
                }
                Map<String, Object> f = l.fields();
                f.put("timerKey", timerKey);
                // A run before this one may have sent it already: the database's evidence decides, not our memory.
                String already = evidence(ds, l, timerKey);
                UUID verdictEvent = null;
                TraceParent trace = null;
                if (already == null) {
                    trace = TraceParent.of(hex(16), hex(8));
                    TimerCommand command = TimerCommand.schedule(l.queue(), timerKey).partition(l.partition()).txn(l.txn())
                            .payload(l.commandPayload()).delay(delayBy).trace(trace)
                            .auth(token != null ? token : env.get(CommandTarget.AUTH_TOKEN_ENV));
                    String commandTopic = commandTopic(ds, l.tenant());
                    String verdicts = auditTopic != null ? auditTopic : AuditTail.topics(env, null, kafka).topicFor(l.tenant());
                    Optional<AuditEvent.Verdict> verdict;
                    RecordMetadata md;
                    try (CommandSender sender = new CommandSender(kafka.clientProps(env, KafkaSettings.Client.PRODUCER),
                            kafka.clientProps(env, KafkaSettings.Client.CONSUMER), verdicts, CommandSender.DEFAULT_SEND_TIMEOUT)) {
                        md = sender.send(command.envelope(commandTopic));
                        verdict = sender.await(md, waitFor);
                    }
                    f.put("topic", md.topic());
                    f.put("partitionOfTopic", md.partition());
                    f.put("offset", md.offset());
                    f.put("traceId", trace.traceId());
                    String sent = "sent schedule " + Printable.line(l.queue() + "/" + timerKey) + " (txn " + Printable.line(l.txn()) + ") to "
                            + md.topic() + "[" + md.partition() + "]@" + md.offset() + ", trace " + trace.traceId();
                    if (verdict.isEmpty()) {
                        output.print(out, sent, f);
                        throw new UserError("no verdict on " + verdicts + " within " + wait + ": dead letter " + id + " is kept;"
                                + " run replay again once the bridge has applied the command (it will not send it twice if the timer is staged)");
                    }
                    AuditEvent.Verdict v = verdict.get();
                    f.put("verdict", v.type().wireName());
                    if (!(v instanceof AuditEvent.Scheduled || v instanceof AuditEvent.Rescheduled)) {
                        output.print(out, sent + "\nverdict: " + v.type().wireName()
                                + (v instanceof AuditEvent.Rejected r ? " (" + r.reason().wireName() + ": " + Printable.line(r.error()) + ")" : "")
                                + "; dead letter " + id + " is kept", f);
                        return 1;
                    }
                    verdictEvent = v.meta().eventId();
                    f.put("verdictEventId", verdictEvent.toString());
                    out.println(sent + "\nverdict: " + v.type().wireName() + " (event " + verdictEvent + ")");
                }
                Removed r = remove(ds, id, "replayed", reason, timerKey, l.txn(), verdictEvent, trace, "replay");
                f.put("state", r.state());
                f.put("removed", true);
                output.print(out, (already != null ? "already replayed (" + already + "): nothing sent; " : "")
                        + "dead letter " + id + " removed (timer " + r.state() + "); audit event dead_letter_removed written for tenant "
                        + r.tenant(), f);
                return 0;
            }
        }

        /** 'pending' or 'fired' when the timer is back already (a run before this one sent it); null when it is not. */
        private static String evidence(DataSource ds, Letter l, String timerKey) throws SQLException {
            try (Connection c = ds.getConnection();
                    PreparedStatement st = c.prepareStatement("SELECT txn FROM queen.timer_peek_v2(?, ?, ?)")) {
                st.setObject(1, l.tenant(), Types.OTHER);
                st.setString(2, l.queue());
                st.setString(3, timerKey);
                try (ResultSet rs = st.executeQuery()) {
                    if (rs.next()) {
                        if (rs.getString(1).equals(l.txn())) {
                            return "pending";
                        }
                        throw new UserError("timer " + l.queue() + "/" + timerKey + " is pending with another txn (" + rs.getString(1)
                                + "): a replay would replace it; cancel it first, or drop the dead letter");
                    }
                }
            }
            boolean fired = new LogReader(ds).find(l.tenant(), l.queue(), l.txn()).stream()
                    .anyMatch(h -> h.partition().equals(l.partition()) && !h.createdAt().isBefore(l.failedAt()));
            return fired ? "fired" : null;
        }

        /**
         * The command topic that stands for the dead letter's tenant, from the database's record of what each bridge
         * group registered at start (queen.bridge_topics, V123), never from the CLI's environment: the bridge stages a
         * command under the tenant of the topic it came in on, so a topic of another tenant would put this tenant's
         * payload into that tenant's queue. --topic only chooses among the tenant's own topics. PRICE: a topic no
         * running (or past) bridge registered cannot be replayed to; start the bridge that reads it first.
         */
        private String commandTopic(DataSource ds, UUID tenant) throws SQLException {
            Map<String, Set<UUID>> tenants = new java.util.TreeMap<>();
            try (Connection c = ds.getConnection();
                    PreparedStatement st = c.prepareStatement("SELECT topic, tenant_id FROM queen.bridge_topics")) {
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        tenants.computeIfAbsent(rs.getString(1), t -> new java.util.TreeSet<>()).add(rs.getObject(2, UUID.class));
                    }
                }
            }
            List<String> own = tenants.entrySet().stream().filter(e -> e.getValue().equals(Set.of(tenant))).map(Map.Entry::getKey).toList();
            if (topic != null) {
                Set<UUID> of = tenants.get(topic);
                if (of == null) {
                    throw new UserError("topic " + Printable.line(topic) + " is not a command topic any bridge registered (queen.bridge_topics):"
                            + " replay refuses a topic whose tenant the database does not know; dead letter " + id + " is tenant " + tenant
                            + (own.isEmpty() ? "" : ", whose command topics are " + String.join(", ", own)));
                }
                if (!of.equals(Set.of(tenant))) {
                    throw new UserError("topic " + Printable.line(topic) + " stands for tenant " + of.stream().map(UUID::toString)
                            .collect(java.util.stream.Collectors.joining(", ")) + ", and dead letter " + id + " is tenant " + tenant
                            + ": replay refuses to send one tenant's payload to another's topic"
                            + (own.isEmpty() ? "" : " (its command topics: " + String.join(", ", own) + ")"));
                }
                return topic;
            }
            if (own.isEmpty()) {
                throw new UserError("no bridge registered a command topic for tenant " + tenant + " (queen.bridge_topics):"
                        + " start the bridge that reads that tenant's commands, then replay dead letter " + id + " again");
            }
            if (own.size() > 1) {
                throw new UserError("tenant " + tenant + " has several command topics (" + String.join(", ", own)
                        + "): name one with --topic");
            }
            return own.get(0);
        }
    }

    @Command(name = "drop", mixinStandardHelpOptions = true,
            description = {"Give a dead letter up: delete it, with a dead_letter_removed audit event carrying your reason.",
                "Its message is never delivered. Exit code 3 when there is none with that id."},
            footer = {"", "Example:", "  queen-timers dead-letters drop 4f1c...e2 --reason 'order 42 was refunded'"})
    static final class Drop implements Callable<Integer> {
        @ParentCommand DeadLettersCommand parent;
        @Spec CommandSpec spec;
        @Mixin DatabaseOptions db;
        @Mixin Output output;

        @Parameters(index = "0", paramLabel = "ID", description = "The dead letter's id (see list).")
        UUID id;

        @Option(names = "--reason", required = true, paramLabel = "TEXT", description = "Why: written into the dead_letter_removed audit event.")
        String reason;

        @Option(names = {"-k", "--key"}, paramLabel = "TIMER_KEY",
                description = "The timer key, to record it for a dead letter written before keys were recorded.")
        String key;

        @Override
        public Integer call() throws SQLException {
            if (reason.isBlank()) {
                throw new UserError("--reason must say why the dead letter is dropped");
            }
            try (HikariDataSource ds = db.open(parent.root.env(), SessionTimeouts.OPERATOR.named("queen-dead-letters"))) {
                if (one(ds, id) == null) {
                    spec.commandLine().getErr().println("no dead letter " + id);
                    return QueenTimers.EXIT_NOT_FOUND;
                }
                Removed r = remove(ds, id, "dropped", reason, key, null, null, null, "drop");
                Map<String, Object> f = new LinkedHashMap<>();
                f.put("id", id.toString());
                f.put("tenant", r.tenant().toString());
                f.put("queue", r.queue());
                f.put("timerKey", r.timerKey());
                f.put("reason", reason);
                f.put("removed", true);
                output.print(spec.commandLine().getOut(), "dead letter " + id + " (" + Printable.line(r.queue()) + "/"
                        + Printable.line(String.valueOf(r.timerKey())) + ") dropped; audit event dead_letter_removed written for tenant " + r.tenant(), f);
                return 0;
            }
        }
    }

    private static final SecureRandom RANDOM = new SecureRandom();

    private static String hex(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    private static Duration duration(String option, String text) {
        try {
            return ConfigDef.parseDuration(text);
        } catch (RuntimeException e) {
            throw new UserError(option + " '" + text + "': " + e.getMessage());
        }
    }
}
