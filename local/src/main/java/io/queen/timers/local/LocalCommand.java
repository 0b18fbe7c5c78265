package io.queen.timers.local;

import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.cli.Output;
import io.queen.timers.cli.QueenTimers;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.log.read.LogMessage;
import io.queen.timers.log.read.LogReader;
import io.queen.timers.log.read.TxnHit;
import io.queen.timers.routes.RouteSettings;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code queen-timers local}: the whole stack in this process, a short demo, and what to type next. */
@Command(name = "local", mixinStandardHelpOptions = true,
        description = {"Run the whole stack in this process, with a demo.",
            "Starts a Kafka broker, PostgreSQL (embedded, or --jdbc-url), the bridge, the sweeper and the",
            "audit relay. Publishes a few example commands and prints every",
            "verdict and fire from the audit topic, and each fired message as read back from the log.",
            "Ctrl-C stops everything."})
public final class LocalCommand implements Callable<Integer> {

    @Spec CommandSpec spec;
    @ParentCommand QueenTimers root;
    @Mixin Output output;

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = "local-data",
            description = "Where PostgreSQL (pg/) and Kafka (kafka/) keep their data between runs (default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--temp", description = "Use temporary data directories, removed at exit.")
    boolean temp;

    @Option(names = "--kafka-port", paramLabel = "PORT", defaultValue = "9092", description = "Kafka client port (default: ${DEFAULT-VALUE}; 0 = any free port).")
    int kafkaPort;

    @Option(names = "--pg-port", paramLabel = "PORT", defaultValue = "15432", description = "Embedded PostgreSQL port (default: ${DEFAULT-VALUE}; 0 = any free port).")
    int pgPort;

    @Option(names = "--jdbc-url", paramLabel = "URL",
            description = "Use this PostgreSQL instead of the embedded one (default: QUEEN_JDBC_URL if set).")
    String jdbcUrl;

    @Option(names = "--jdbc-user", paramLabel = "USER", description = "User for --jdbc-url (else QUEEN_JDBC_USER, else postgres).")
    String jdbcUser;

    @Option(names = "--jdbc-password", paramLabel = "PASSWORD",
            description = "Password for --jdbc-url (prefer QUEEN_JDBC_PASSWORD).")
    String jdbcPassword;

    @Option(names = "--http-port", paramLabel = "PORT", defaultValue = "8081",
            description = "/health and /metrics of the bridge on PORT, of the sweeper on PORT+1 (default: ${DEFAULT-VALUE}; 0 = free ports).")
    int httpPort;

    @Option(names = "--no-demo", description = "Do not publish the example commands.")
    boolean noDemo;

    @Option(names = "--demo-only", description = "Exit when the example commands have all come back (or after 120 s).")
    boolean demoOnly;

    @Option(names = "--exit-after", paramLabel = "SECONDS", description = "Stop after this many seconds.")
    Integer exitAfter;

    private String setting(ConfigDef def, String key, String flag) {
        ConfigDef.Key k = def.key(key);
        return flag != null ? flag : root.env().getOrDefault(k.env(), k.defaultValue());
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        // a flag, else the setting's environment variable, else its default: the names and defaults the services declare
        ConfigDef def = BridgeSettings.definition();
        LocalStack.Plan plan = new LocalStack.Plan(temp ? null : dataDir.toAbsolutePath().normalize(), kafkaPort, pgPort,
                blankToNull(setting(def, CommonSettings.JDBC_URL, jdbcUrl)), setting(def, CommonSettings.JDBC_USER, jdbcUser),
                setting(def, CommonSettings.JDBC_PASSWORD, jdbcPassword), httpPort, httpPort == 0 ? 0 : httpPort + 1,
                def.key(RouteSettings.COMMAND_TOPICS).defaultValue(), def.key(CommonSettings.AUDIT_TOPIC).defaultValue());
        say(out, "starting Kafka, PostgreSQL, the bridge and the sweeper ...");
        CountDownLatch stop = new CountDownLatch(1);
        boolean demoComplete;
        try (LocalStack stack = LocalStack.start(plan)) {
            Thread hook = new Thread(() -> {
                stop.countDown();
                stack.close();
            }, "queen-local-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                LocalStack.Endpoints ep = stack.endpoints();
                banner(out, ep);
                Demo demo = new Demo();
                LogReadback readback = readback(stack);
                try (AuditWatcher watcher = new AuditWatcher(ep.bootstrap(), ep.auditTopic(), out, output.json(), readback, demo::observe)) {
                    if (!noDemo) {
                        say(out, "publishing the example commands:\n" + demo.describe());
                        demo.publish(ep.bootstrap(), ep.commandTopic());
                    }
                    demoComplete = waitForEnd(out, stop, demo);
                }
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // Ctrl-C: the hook is running and closes the stack
                }
            }
        }
        say(out, "stopped");
        if (!demoComplete) {
            throw new IllegalStateException("demo incomplete: not every example command came back within the time allowed");
        }
        return 0;
    }

    /** @return false when --demo-only ran out of time before every example came back */
    private boolean waitForEnd(PrintWriter out, CountDownLatch stop, Demo demo) throws InterruptedException {
        long deadline = exitAfter == null ? Long.MAX_VALUE : System.nanoTime() + TimeUnit.SECONDS.toNanos(exitAfter);
        if (demoOnly && !noDemo) {
            boolean done = demo.awaitDone(Duration.ofSeconds(exitAfter == null ? 120 : exitAfter));
            if (done) {
                say(out, "demo complete: every example command came back");
            }
            return done;
        }
        while (System.nanoTime() < deadline) {
            if (stop.await(Math.min(1_000, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)), TimeUnit.MILLISECONDS)) {
                return true;
            }
        }
        return true;
    }

    /** For a fire: the message found in the log by its txn and decoded, as a consumer of the queue would see it. */
    private static LogReadback readback(LocalStack stack) {
        LogReader reader = new LogReader(stack.newDataSource());
        return event -> {
            String queue = event.path("queue").asText();
            String txn = event.path("txn").asText();
            UUID tenant = UUID.fromString(event.path("tenant").asText(CommonSettings.DEFAULT_TENANT));
            try {
                for (TxnHit hit : reader.find(tenant, queue, txn)) {
                    for (LogMessage m : reader.read(tenant, queue, hit.partition(), hit.offset(), 1)) {
                        Map<String, Object> f = new LinkedHashMap<>();
                        f.put("log", queue);
                        f.put("partition", m.partition());
                        f.put("offset", m.offset());
                        f.put("txn", m.txn());
                        f.put("messageId", m.messageId().toString());
                        f.put("payload", m.payloadText());
                        return Optional.of(new LogReadback.Found(queue + "[" + m.partition() + "]@" + m.offset() + "  txn " + m.txn()
                                + "  message " + m.messageId() + "  payload " + m.payloadText(), Output.toJson(f)));
                    }
                }
                return Optional.of(new LogReadback.Found("txn " + txn + " not found in " + queue + " (yet)",
                        Output.toJson(Map.of("log", queue, "txn", txn, "found", false))));
            } catch (SQLException e) {
                return Optional.of(new LogReadback.Found("cannot read the log: " + e.getMessage(),
                        Output.toJson(Map.of("log", queue, "error", String.valueOf(e.getMessage())))));
            }
        };
    }

    private void banner(PrintWriter out, LocalStack.Endpoints ep) {
        String jar = "java -jar local/target/queen-timers.jar";
        say(out, String.join("\n",
                "queen-timers local stack is up",
                "  Kafka        " + ep.bootstrap() + "   commands: " + ep.commandTopic() + "   audit: " + ep.auditTopic()
                        + "   data: " + ep.kafkaData(),
                "  PostgreSQL   " + ep.jdbcUrl() + "   user " + ep.jdbcUser() + "   data: " + ep.pgData(),
                "  bridge       http://127.0.0.1:" + ep.bridgeHttpPort() + "/health/ready   /metrics",
                "  sweeper      http://127.0.0.1:" + ep.sweeperHttpPort() + "/health/ready   /metrics",
                "From a second terminal:",
                "  " + jar + " schedule -b " + ep.bootstrap() + " -q demo.reminders -k hello --delay 10s --payload '{\"hello\":\"world\"}' --wait",
                "  " + jar + " list --jdbc-url " + ep.jdbcUrl() + " -q demo.reminders",
                "  " + jar + " find --jdbc-url " + ep.jdbcUrl() + " -q demo.reminders --txn hello",
                "  " + jar + " tail --jdbc-url " + ep.jdbcUrl() + " -q demo.reminders --follow",
                "Ctrl-C stops everything."));
    }

    private void say(PrintWriter out, String text) {
        if (output.json()) {
            synchronized (out) {
                out.println(Output.toJson(Map.of("local", text)));
                out.flush();
            }
        } else {
            synchronized (out) {
                out.println(text);
                out.flush();
            }
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
