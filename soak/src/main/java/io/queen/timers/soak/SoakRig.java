package io.queen.timers.soak;

import io.queen.timers.testkit.Poison;
import io.queen.timers.processes.Launcher;
import io.queen.timers.processes.ManagedProcess;
import io.queen.timers.processes.PostgresProcess;
import io.queen.timers.soak.load.SteadyLoad;
import io.queen.timers.soak.report.Report;
import io.queen.timers.soak.sample.Column;
import io.queen.timers.soak.sample.ProcStat;
import io.queen.timers.soak.sample.Sample;
import io.queen.timers.soak.sample.Sampler;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * The soak rig (docs/soak.md): one durable PostgreSQL and one Kafka broker for the whole run, and
 * per variant a fresh database, fresh topics, a bridge and the sweepers from the launcher jar with the
 * variant's settings, the same steady load, a sample every 10 s; the report is rewritten after each
 * variant, so an interrupted run keeps what it measured.
 */
public final class SoakRig {

    private final RigOptions o;
    private final long t0 = System.currentTimeMillis();
    private final String javaBin = ProcessHandle.current().info().command().orElse("java");
    private PostgresProcess postgres;
    private ManagedProcess broker;
    private final List<ManagedProcess> services = new ArrayList<>();

    private SoakRig(RigOptions o) {
        this.o = o;
    }

    public static void main(String[] args) {
        ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("org.apache.kafka")).setLevel(ch.qos.logback.classic.Level.WARN);
        RigOptions o;
        try {
            o = RigOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        int code = 0;
        try {
            new SoakRig(o).run();
        } catch (Exception e) {
            e.printStackTrace();
            System.err.println("soak rig: error: " + e);
            code = 1;
        }
        System.exit(code);
    }

    private void log(String line) {
        System.out.printf("[%7.1f s] %s%n", (System.currentTimeMillis() - t0) / 1000.0, line);
        System.out.flush();
    }

    private void run() throws Exception {
        if (!Files.isRegularFile(o.launcherJar())) {
            throw new IllegalStateException("launcher jar " + o.launcherJar() + " not found: build it first (docs/soak.md)");
        }
        Path work = o.workDir().toAbsolutePath();
        deleteTree(work);
        Files.createDirectories(work.resolve("logs"));
        log("soak rig: " + o.variants().size() + " variants x " + o.secondsPerVariant() + " s, " + o.rate() + " commands/s, delays 1-"
                + o.maxDelaySeconds() + " s, " + o.sweepers() + " sweeper(s); results in " + o.resultsDir() + "; work dir " + work);
        // PostgreSQL's defaults but durability (the committed report was measured so)
        postgres = new PostgresProcess(work, Launcher.freePort(), PostgresProcess.Durability.DURABLE, Map.of());
        int kafkaPort = Launcher.freePort();
        broker = new Launcher(o.launcherJar().toAbsolutePath()).broker(work.resolve("kafka-data"), kafkaPort,
                List.of("-Xmx512m", "-XX:+UseSerialGC"), work.resolve("logs/broker.log"));
        Thread stopper = new Thread(this::stopAll, "stop-rig");
        Runtime.getRuntime().addShutdownHook(stopper);
        try {
            log("postgres: initdb + start (durable: fsync, synchronous_commit, full_page_writes on) on port " + postgres.port());
            postgres.bootstrap();
            log("broker: start on port " + kafkaPort);
            broker.start();
            Launcher.awaitPort(kafkaPort, 180_000);
            String bootstrap = "127.0.0.1:" + kafkaPort;
            String header = header();
            List<Report.VariantRun> runs = new ArrayList<>();
            for (Variant v : o.variants()) {
                runs.add(runVariant(v, bootstrap));
                Report.write(o.resultsDir(), header, runs);
                log("report written to " + o.resultsDir() + " (" + runs.size() + " of " + o.variants().size() + " variants)");
            }
        } finally {
            stopAll();
            try {
                Runtime.getRuntime().removeShutdownHook(stopper);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs already
            }
        }
    }

    private Report.VariantRun runVariant(Variant v, String bootstrap) throws Exception {
        String db = v.database();
        String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        log("variant " + v.name() + " (" + v.changes() + "): fresh database " + db);
        try (Connection c = postgres.connect(); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
            s.execute("CREATE DATABASE " + db);
        }
        Path logs = o.workDir().toAbsolutePath().resolve("logs/" + v.name());
        Files.createDirectories(logs);
        runOnce(logs.resolve("migrate.log"), List.of(javaBin, "-jar", o.launcherJar().toString(), "migrate", "--jdbc-url", postgres.jdbcUrl(db),
                "--jdbc-user", "postgres"));
        try (Connection c = postgres.connect(db); Statement s = c.createStatement()) {
            s.execute(v.storageSql());
            Poison.install(c);
        }
        String topicA = "soak." + v.name() + ".a";
        String topicB = "soak." + v.name() + ".b";
        String audit = "soak." + v.name() + ".audit";
        createTopics(bootstrap, topicA, topicB, audit, audit + "." + SteadyLoad.TENANT_B);
        try (Connection c = postgres.connect(); Statement s = c.createStatement()) {
            // Every variant starts right after a checkpoint, so each meets the same checkpoint (and full-page-write) schedule.
            s.execute("CHECKPOINT");
        }

        Properties common = new Properties();
        common.put("jdbc.url", postgres.jdbcUrl(db));
        common.put("jdbc.user", "postgres");
        common.put("db.role.check", "false"); // connects as the superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        common.put("kafka.bootstrap.servers", bootstrap);
        common.put("audit.topic", audit);
        common.put("tenant." + SteadyLoad.TENANT_B + ".audit.topic", audit + "." + SteadyLoad.TENANT_B);
        common.put("migrate.on.start", "false");
        Properties bridge = (Properties) common.clone();
        bridge.put("command.topics", topicA + "," + topicB);
        bridge.put("topic." + topicA + ".tenant", SteadyLoad.TENANT_A);
        bridge.put("topic." + topicB + ".tenant", SteadyLoad.TENANT_B);
        bridge.put("bridge.group.id", "soak-" + v.name());
        bridge.put("bridge.start.position", "earliest"); // a new group per variant: every command of the run is to be applied
        int bridgePort = Launcher.freePort();
        bridge.put("http.port", Integer.toString(bridgePort));
        ManagedProcess bridgeProc = service(logs, "bridge-1", "bridge", bridge);
        List<ManagedProcess> sweepers = new ArrayList<>();
        List<URI> sweeperMetrics = new ArrayList<>();
        for (int i = 1; i <= o.sweepers(); i++) {
            Properties sw = (Properties) common.clone();
            sw.putAll(v.sweeperSettings());
            int port = Launcher.freePort();
            sw.put("http.port", Integer.toString(port));
            sweepers.add(service(logs, "sweeper-" + i, "sweeper", sw));
            sweeperMetrics.add(URI.create("http://127.0.0.1:" + port + "/metrics"));
        }
        services.add(bridgeProc);
        services.addAll(sweepers);
        services.forEach(ManagedProcess::start);
        for (ManagedProcess p : services) {
            long deadline = System.currentTimeMillis() + 300_000;
            while (!p.startedLogContains("running;")) {
                if (!p.isAlive() || System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(p.name() + " of variant " + v.name() + " did not start (see " + p.logFile() + ")");
                }
                Thread.sleep(250);
            }
        }
        log("variant " + v.name() + ": bridge and " + o.sweepers() + " sweeper(s) running; load for " + o.secondsPerVariant() + " s");

        SteadyLoad load = new SteadyLoad(bootstrap, topicA, topicB, o.rate(), o.maxDelaySeconds(), () -> {
            try {
                return postgres.connect(db);
            } catch (SQLException e) {
                throw new IllegalStateException("cannot register poisoned txns in " + db, e);
            }
        });
        AtomicReference<Exception> loadError = new AtomicReference<>();
        long durationMs = o.secondsPerVariant() * 1000;
        Thread producer = new Thread(() -> {
            try {
                load.run(durationMs);
            } catch (Exception e) {
                loadError.set(e);
            }
        }, "soak-load");
        List<Sample> samples = new ArrayList<>();
        List<long[]> lateness = new ArrayList<>();
        List<Sampler.CallHistograms> calls = new ArrayList<>();
        long start = System.currentTimeMillis();
        producer.start();
        List<LongSupplier> sweeperPids = sweepers.stream().map(p -> (LongSupplier) p::pid).toList();
        try (Connection c = postgres.connect(db)) {
            Sampler sampler = new Sampler(v.name(), c, sweeperMetrics,
                    new Sampler.Pids(bridgeProc::pid, sweeperPids, broker::pid, postgres::postmasterPid), load::produced, clockTicks(), start);
            for (int k = 0; ; k++) {
                long due = start + k * o.sampleSeconds() * 1000L;
                long wait = due - System.currentTimeMillis();
                if (wait > 0) {
                    Thread.sleep(wait);
                }
                Sampler.Taken t = sampler.take();
                samples.add(t.sample());
                lateness.add(t.lateness());
                calls.add(t.calls());
                if (k % 6 == 0 || due >= start + durationMs) {
                    Sample s = t.sample();
                    log(String.format("  %s t=%.0fs pending %.0f dead %.0f produced %.0f fired/s %.0f late p99 %.0f ms claim p50/p99 %.1f/%.1f ms load %.1f",
                            v.name(), s.get(Column.T_S), s.get(Column.TIMERS_LIVE),
                            s.get(Column.TIMERS_DEAD), s.get(Column.PRODUCED), s.get(Column.FIRED_PER_S),
                            s.get(Column.LATE_P99_MS), s.get(Column.CLAIM_P50_MS), s.get(Column.CLAIM_P99_MS),
                            s.get(Column.LOAD1)));
                }
                if (due >= start + durationMs) {
                    break;
                }
                if (loadError.get() != null) {
                    throw loadError.get();
                }
            }
        } finally {
            load.stop();
            producer.join(60_000);
            for (ManagedProcess p : services) {
                p.stop();
            }
            services.clear();
        }
        log("variant " + v.name() + ": done, " + load.produced() + " commands produced (" + load.sendFailures() + " send failures)");
        try (Connection c = postgres.connect(); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
        }
        return new Report.VariantRun(v, samples, lateness, calls, startedAt);
    }

    private ManagedProcess service(Path logs, String name, String role, Properties settings) throws IOException {
        Path file = logs.resolve(name + ".properties");
        try (var out = Files.newOutputStream(file)) {
            settings.store(out, "soak rig: " + name);
        }
        return new ManagedProcess(name, List.of(javaBin, "-Xmx512m", "-jar", o.launcherJar().toAbsolutePath().toString(), role, "--config",
                file.toString()), Map.of(), logs.resolve(name + ".log"));
    }

    private String header() throws SQLException {
        StringBuilder b = new StringBuilder();
        b.append("# Soak rig report ").append(o.resultsDir().getFileName()).append("\n\n");
        b.append("Command: `soak/run --seconds ").append(o.secondsPerVariant()).append(" --rate ").append(o.rate())
                .append(" --max-delay-seconds ").append(o.maxDelaySeconds()).append(" --sweepers ").append(o.sweepers())
                .append(" --variants ").append(String.join(",", o.variants().stream().map(Variant::name).toList())).append("`\n\n");
        if (!o.note().isBlank()) {
            b.append(o.note()).append("\n\n");
        }
        b.append("- Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, load average at start ")
                .append(ProcStat.loadAverage()).append(" (each sample records it: `load1`); Java ")
                .append(System.getProperty("java.version")).append('\n');
        try (Connection c = postgres.connect(); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT version()")) {
                rs.next();
                b.append("- PostgreSQL: ").append(rs.getString(1)).append('\n');
            }
            b.append("- PostgreSQL settings:");
            for (String k : List.of("fsync", "synchronous_commit", "full_page_writes", "wal_level", "shared_buffers", "max_wal_size",
                    "checkpoint_timeout", "autovacuum_naptime", "autovacuum_vacuum_cost_limit", "autovacuum_vacuum_cost_delay")) {
                try (ResultSet rs = s.executeQuery("SHOW " + k)) {
                    rs.next();
                    b.append(" `").append(k).append("=").append(rs.getString(1)).append('`');
                }
            }
            b.append('\n');
        }
        b.append("- Load: ").append(o.rate()).append(" commands/s for ").append(o.secondsPerVariant())
                .append(" s per variant: 2 tenants (75/25 %), 4 queues, 3 partitions; 81 % new schedules, 9 % reschedules, 9 % cancels,")
                .append(" 1 % poisoned schedules (their destination refuses them: backoff, then the DLQ); delays uniform 1-")
                .append(o.maxDelaySeconds()).append(" s; ~200-byte payloads\n");
        b.append("- Processes: PostgreSQL (pg_ctl), a Kafka broker JVM, 1 bridge and ").append(o.sweepers())
                .append(" sweeper(s) from the launcher jar with their defaults except the variant's settings; each variant on a fresh database and fresh topics, after a CHECKPOINT\n");
        return b.toString();
    }

    private void createTopics(String bootstrap, String... topics) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            List<NewTopic> nt = new ArrayList<>();
            for (String t : topics) {
                nt.add(new NewTopic(t, t.endsWith(".a") || t.endsWith(".b") ? 6 : 3, (short) 1));
            }
            admin.createTopics(nt).all().get(60, TimeUnit.SECONDS);
        }
    }

    private static void runOnce(Path out, List<String> cmd) throws InterruptedException, IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", cmd.subList(2, 4)) + " failed (see " + out + ")");
        }
    }

    private static long clockTicks() {
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK").start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            p.waitFor(10, TimeUnit.SECONDS);
            return Long.parseLong(out);
        } catch (IOException | RuntimeException | InterruptedException e) {
            return 100;
        }
    }

    private synchronized void stopAll() {
        for (ManagedProcess p : services) {
            try {
                p.stop();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        services.clear();
        if (broker != null) {
            try {
                broker.stop();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (postgres != null) {
            postgres.stopQuietly();
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
