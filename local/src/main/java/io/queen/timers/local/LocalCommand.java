package io.queen.timers.local;

import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.cli.Output;
import io.queen.timers.cli.QueenTimers;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.log.read.LogMessage;
import io.queen.timers.log.read.LogReader;
import io.queen.timers.log.read.TxnHit;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.stack.Kafka;
import io.queen.timers.stack.Postgres;
import io.queen.timers.stack.Stack;
import io.queen.timers.sweeper.SweeperMain;
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
        String externalUrl = blankToNull(setting(def, CommonSettings.JDBC_URL, jdbcUrl));
        Path data = temp ? null : dataDir.toAbsolutePath().normalize();
        // the in-process broker halts the whole JVM when it cannot bind: a port in use is found out first, as one line
        Ports.requireFree(kafkaPort, "--kafka-port");
        if (externalUrl == null) {
            Ports.requireFree(pgPort, "--pg-port");
        }
        Ports.requireFree(httpPort, "--http-port");
        Ports.requireFree(httpPort == 0 ? 0 : httpPort + 1, "--http-port");
        Postgres postgres = externalUrl != null
                ? Postgres.external(externalUrl, setting(def, CommonSettings.JDBC_USER, jdbcUser), setting(def, CommonSettings.JDBC_PASSWORD, jdbcPassword))
                : Postgres.embedded(data == null ? null : data.resolve("pg"), pgPort);
        say(out, "starting Kafka, PostgreSQL, the bridge and the sweeper ...");
        CountDownLatch stop = new CountDownLatch(1);
        boolean demoComplete;
        try (Stack stack = stack(postgres, Kafka.embedded(data == null ? null : data.resolve("kafka"), kafkaPort), httpPort,
                httpPort == 0 ? 0 : httpPort + 1).start()) {
            Thread hook = new Thread(() -> {
                stop.countDown();
                stack.close();
            }, "queen-local-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                banner(out, stack, externalUrl != null ? "(external)" : data == null ? "(temporary)" : data.resolve("pg").toString(),
                        data == null ? "(temporary)" : data.resolve("kafka").toString());
                Demo demo = new Demo();
                LogReadback readback = readback(stack);
                try (AuditWatcher watcher = new AuditWatcher(stack.bootstrapServers(), stack.auditTopic(), out, output.json(), readback,
                        demo::observe)) {
                    if (!noDemo) {
                        say(out, "publishing the example commands:\n" + demo.describe());
                        demo.publish(stack.bootstrapServers(), stack.commandTopic());
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

    /**
     * The whole product in one JVM: the broker and the database given, the schema migrated by the owner (the user given,
     * or the embedded server's superuser), the topics the services declare by default, and the bridge and the sweeper,
     * each under its host with its /health and /metrics port (0: a free one) and as a least-privilege login of its role,
     * as in production (docs/schema-and-roles.md#database-roles; db.role.check stays on). What it sets is only where
     * things are: every other setting is at the default the services ship with.
     */
    static Stack.Builder stack(Postgres postgres, Kafka kafka, int bridgeHttpPort, int sweeperHttpPort) {
        ConfigDef def = BridgeSettings.definition();
        return Stack.builder().postgres(postgres).kafka(kafka).migrated()
                .commandTopic(def.key(RouteSettings.COMMAND_TOPICS).defaultValue())
                .auditTopic(def.key(CommonSettings.AUDIT_TOPIC).defaultValue())
                .logins("queen_local")
                .service(BridgeMain.SERVICE, (s, stack) -> s.set(CommonSettings.HTTP_PORT, bridgeHttpPort)
                        // a sandbox whose topic may outlive its database: its commands are the user's own, applied again rather than waiting
                        .set(BridgeSettings.START_POSITION, "earliest"))
                .service(SweeperMain.SERVICE, (s, stack) -> s.set(CommonSettings.HTTP_PORT, sweeperHttpPort));
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
    private static LogReadback readback(Stack stack) {
        LogReader reader = new LogReader(stack.newOwnerPool("queen-local", 4));
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

    private void banner(PrintWriter out, Stack stack, String pgData, String kafkaData) {
        String jar = "java -jar local/target/queen-timers.jar";
        String bootstrap = stack.bootstrapServers();
        String jdbc = stack.jdbcUrl();
        say(out, String.join("\n",
                "queen-timers local stack is up",
                "  Kafka        " + bootstrap + "   commands: " + stack.commandTopic() + "   audit: " + stack.auditTopic()
                        + "   data: " + kafkaData,
                "  PostgreSQL   " + jdbc + "   user " + stack.ownerUser() + "   data: " + pgData,
                "  bridge       http://127.0.0.1:" + stack.host(BridgeMain.SERVICE).httpPort() + "/health/ready   /metrics",
                "  sweeper      http://127.0.0.1:" + stack.host(SweeperMain.SERVICE).httpPort() + "/health/ready   /metrics",
                "From a second terminal:",
                "  " + jar + " schedule -b " + bootstrap + " -q demo.reminders -k hello --delay 10s --payload '{\"hello\":\"world\"}' --wait",
                "  " + jar + " list --jdbc-url " + jdbc + " -q demo.reminders",
                "  " + jar + " find --jdbc-url " + jdbc + " -q demo.reminders --txn hello",
                "  " + jar + " tail --jdbc-url " + jdbc + " -q demo.reminders --follow",
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
