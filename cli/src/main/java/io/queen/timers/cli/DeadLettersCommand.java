package io.queen.timers.cli;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.command.TraceParent;
import io.queen.timers.client.verdict.CommandSender;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.core.text.Printable;
import io.queen.timers.inspect.DeadLetters.Letter;
import io.queen.timers.inspect.DeadLetters.Removed;
import io.queen.timers.inspect.DeadLetters;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
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

    /** One dead letter in one line, for people. */
    static String line(Letter l) {
        return l.id() + "  " + l.failedAt() + "  " + Printable.line(l.queue()) + "/"
                + (l.timerKey() == null ? "(key not recorded)" : Printable.line(l.timerKey()))
                + "  partition " + Printable.line(l.partition()) + "  txn " + Printable.line(String.valueOf(l.txn())) + "  attempts "
                + l.attempts() + "  error " + Printable.line(String.valueOf(l.error()));
    }

    /** The shared refusals, as the CLI shows them (one line on stderr, exit code 1). */
    static UserError refused(DeadLetters.Refused r) {
        return new UserError(Printable.line(r.getMessage())); // a topic or key named in it may hold control characters
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
                letters = new DeadLetters(ds).list(tenant, queue, limit);
            }
            PrintWriter out = spec.commandLine().getOut();
            for (Letter l : letters) {
                output.print(out, line(l), l.fields());
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
                l = new DeadLetters(ds).one(id).orElse(null);
            }
            if (l == null) {
                spec.commandLine().getErr().println("no dead letter " + id);
                return QueenTimers.EXIT_NOT_FOUND;
            }
            Map<String, Object> f = l.fields();
            f.put("payload", l.payloadJson());
            f.put("replayable", l.replayable());
            output.print(spec.commandLine().getOut(), line(l) + "\npayload " + Printable.line(String.valueOf(l.payload())), f);
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
                DeadLetters letters = new DeadLetters(ds);
                Letter l = letters.one(id).orElse(null);
                if (l == null) {
                    spec.commandLine().getErr().println("no dead letter " + id);
                    return QueenTimers.EXIT_NOT_FOUND;
                }
                DeadLetters.Replay plan;
                try {
                    plan = letters.replay(l, key, "--key");
                } catch (DeadLetters.Refused r) {
                    throw refused(r);
                }
                String timerKey = plan.timerKey();
                Map<String, Object> f = l.fields();
                f.put("timerKey", timerKey);
                // A run before this one may have sent it already: the database's evidence decides, not our memory.
                String already = plan.already();
                UUID verdictEvent = null;
                TraceParent trace = null;
                if (already == null) {
                    trace = TraceParent.of(hex(16), hex(8));
                    TimerCommand command = plan.command(delayBy, trace, token != null ? token : env.get(CommandTarget.AUTH_TOKEN_ENV));
                    String commandTopic;
                    try {
                        commandTopic = letters.commandTopic(id, l.tenant(), topic, "--topic");
                    } catch (DeadLetters.Refused r) {
                        throw refused(r);
                    }
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
                Removed r;
                try {
                    r = letters.remove(id, "replayed", reason, timerKey, l.txn(), verdictEvent, trace, clientLabel("replay"));
                } catch (DeadLetters.Refused e) {
                    throw refused(e);
                }
                f.put("state", r.state());
                f.put("removed", true);
                output.print(out, (already != null ? "already replayed (" + already + "): nothing sent; " : "")
                        + "dead letter " + id + " removed (timer " + r.state() + "); audit event dead_letter_removed written for tenant "
                        + r.tenant(), f);
                return 0;
            }
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
                DeadLetters letters = new DeadLetters(ds);
                if (letters.one(id).isEmpty()) {
                    spec.commandLine().getErr().println("no dead letter " + id);
                    return QueenTimers.EXIT_NOT_FOUND;
                }
                Removed r;
                try {
                    r = letters.remove(id, "dropped", reason, key, null, null, null, clientLabel("drop"));
                } catch (DeadLetters.Refused e) {
                    throw refused(e);
                }
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
