package io.queen.timers.bench.pipeline;

import io.queen.timers.bench.DeployedJvm;
import io.queen.timers.bench.peer.DbSchedulerJob;
import io.queen.timers.bench.sweeper.DbSchedulerSteadyBench;
import io.queen.timers.processes.Launcher;
import io.queen.timers.processes.ManagedProcess;
import io.queen.timers.processes.PostgresProcess;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * The two peers of issue 48's steady comparison, run after ours in the same {@code PipelineBench --peers} run, on the same
 * PostgreSQL and broker, each in a database of its own owned by a plain login, each as a process of its own in the
 * services' JVM ({@link DeployedJvm}), each started cold and fed from the moment it is ready, each measured as
 * {@link SteadyReport} measures ours:
 * <ul>
 * <li>(a) <b>db-scheduler's no-op task</b>: {@link DbSchedulerSteadyBench} (its feeder in its JVM, so its CPU is in the
 *     JVM's: the scheduling side of a task), figures under {@code dbs<rate>};</li>
 * <li>(b) <b>the same job built on db-scheduler</b>: {@link DbSchedulerJob}, fed through the broker by this JVM exactly as
 *     the bridge is fed, its events read as the audit topic is, figures under {@code dbsjob<rate>}.</li>
 * </ul>
 * Between phases, unmeasured: VACUUM ANALYZE of the database just used, a CHECKPOINT, and a wait until no autovacuum
 * worker runs, so that no phase pays for the one before it.
 */
final class Peers {

    static final String JOB_COMMANDS = "bench.dbsjob.commands";
    static final String JOB_EVENTS = "bench.dbsjob.events";

    private final PostgresProcess pg;
    private final ManagedProcess broker;
    private final String bootstrap;
    private final Path out;
    private final Consumer<String> log;

    Peers(PostgresProcess pg, ManagedProcess broker, String bootstrap, Path out, Consumer<String> log) {
        this.pg = pg;
        this.broker = broker;
        this.bootstrap = bootstrap;
        this.out = out;
        this.log = log;
    }

    /** Peer (a) at a steady rate: its figures (name without the label → value), also printed as {@code figure} lines for bench/run. */
    Map<String, Double> noop(int rate, int seconds, int firstSeconds) throws Exception {
        return noop("dbs" + rate, "cold, " + rate + "/s for " + seconds + " s", seconds + 300, "rate=" + rate, "seconds=" + seconds,
                "warmup=0", "first=" + firstSeconds);
    }

    /** Peer (a) beside a burst ({@code mode=burst}) or single timers ({@code mode=single}) of {@code count}. */
    Map<String, Double> noop(String mode, int count) throws Exception {
        return noop("dbs" + mode, mode + " of " + count, 1800, "mode=" + mode, "count=" + count);
    }

    private Map<String, Double> noop(String label, String what, int maxSeconds, String... args) throws Exception {
        String db = "bench_dbs";
        createDatabase(db);
        settle();
        DeployedJvm jvm = DeployedJvm.of(Path.of(""), "sweeper");
        List<String> cmd = java(jvm);
        cmd.addAll(List.of("-cp", benchJar(), DbSchedulerSteadyBench.class.getName(), "jdbc=" + pg.jdbcUrl(db), "user=" + db,
                "pgpid=" + pg.postmasterPid(), "label=" + label));
        cmd.addAll(List.of(args));
        Path logFile = out.resolve("dbs-noop-log.txt");
        ManagedProcess p = new ManagedProcess("db-scheduler no-op", cmd, jvm.env(), logFile);
        log.accept("(a) db-scheduler's no-op task, " + what + ", JVM " + jvm.describe() + "; its output: " + logFile);
        p.start();
        long deadline = System.currentTimeMillis() + maxSeconds * 1000L;
        while (p.isAlive()) {
            if (System.currentTimeMillis() > deadline) {
                p.stop();
                throw new IllegalStateException("peer (a) did not end (see " + logFile + ")");
            }
            Thread.sleep(200);
        }
        Map<String, Double> figures = new LinkedHashMap<>();
        for (String line : Files.readAllLines(logFile)) {
            if (line.startsWith("=== harness:") || line.startsWith("Picked up JAVA_TOOL_OPTIONS")) {
                continue;
            }
            String[] f = line.trim().split(" ");
            if (f.length == 4 && f[0].equals("figure") && f[1].startsWith(label + ".")) {
                SteadyReport.figure(label, f[1].substring(label.length() + 1), Double.parseDouble(f[2]), f[3]);
                figures.put(f[1].substring(label.length() + 1), Double.parseDouble(f[2]));
            } else {
                log.accept("  (a) " + line);
            }
        }
        if (figures.isEmpty()) {
            throw new IllegalStateException("peer (a) printed no figures (see " + logFile + ")");
        }
        vacuum(db);
        return figures;
    }

    /** What peer (b) is run for: given the started job, its meter and its events, a measurement. */
    @FunctionalInterface
    interface JobRun<T> {
        T run(SteadyReport.Meter meter, AuditWatch events) throws Exception;
    }

    /** Peer (b) at a steady rate, fed by {@code producer} through the broker: its warm numbers (its figures printed by SteadyReport). */
    SteadyReport.Measured job(KafkaProducer<byte[], byte[]> producer, int rate, int seconds, int firstSeconds, int queues) throws Exception {
        String label = "dbsjob" + rate;
        return job("fed " + rate + "/s for " + seconds + " s over " + queues + " queues", (meter, events) -> SteadyReport.report(
                SteadyFeed.run(new SteadyFeed.Settings(label, "DB-SCHEDULER JOB (b)", JOB_COMMANDS, "dbsjob", queues, rate, seconds,
                        firstSeconds, Duration.ofSeconds(Math.max(120, seconds / 2))), producer, events, meter, s -> { }, s -> { }, log), log));
    }

    /**
     * Peer (b) started cold on a database of its own and topics of its own, measured by {@code what}; stopped, and its
     * database vacuumed, after.
     */
    <T> T job(String what, JobRun<T> measure) throws Exception {
        String db = "bench_dbsjob";
        createDatabase(db);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(JOB_COMMANDS, 4, (short) 1), new NewTopic(JOB_EVENTS, 4, (short) 1))).all().get();
        }
        settle();
        DeployedJvm jvm = DeployedJvm.of(Path.of(""), "bridge");
        List<String> cmd = java(jvm);
        cmd.addAll(List.of("-cp", benchJar(), DbSchedulerJob.class.getName(), "jdbc=" + pg.jdbcUrl(db), "user=" + db,
                "bootstrap=" + bootstrap, "commands=" + JOB_COMMANDS, "events=" + JOB_EVENTS));
        Path logFile = out.resolve("dbs-job-log.txt");
        ManagedProcess p = new ManagedProcess("db-scheduler job", cmd, jvm.env(), logFile);
        try (AuditWatch events = new AuditWatch(bootstrap, JOB_EVENTS)) {
            p.start();
            if (!Launcher.awaitRunning(p, 180_000)) {
                throw new IllegalStateException("peer (b) did not start (see " + logFile + ")");
            }
            log.accept("(b) the same job built on db-scheduler (DbSchedulerJob), ready (pid " + p.pid() + "), JVM " + jvm.describe() + "; " + what);
            Map<String, java.util.function.DoubleSupplier> cpu = new LinkedHashMap<>();
            cpu.put("db-scheduler job JVM", () -> ProcCpu.seconds(p.pid()));
            cpu.put(SteadyReport.POSTGRES, () -> ProcCpu.treeSeconds(pg.postmasterPid()));
            cpu.put(SteadyReport.BROKER, () -> ProcCpu.seconds(broker.pid()));
            return measure.run(new SteadyReport.Meter(cpu, pg::connect), events);
        } finally {
            p.stop();
            log.accept("  (b) its log: " + logFile + "; rows left in scheduled_tasks: " + scalar(db, "SELECT count(*) FROM scheduled_tasks")
                    + ", in job_log: " + scalar(db, "SELECT count(*) FROM job_log"));
            vacuum(db);
        }
    }

    private List<String> java(DeployedJvm jvm) {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java")));
        cmd.addAll(jvm.imageFlags());
        return cmd;
    }

    private void createDatabase(String name) throws SQLException {
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE ROLE " + name + " LOGIN");
            st.execute("CREATE DATABASE " + name + " OWNER " + name);
        }
    }

    /** A CHECKPOINT, then until no autovacuum worker runs (at most 5 minutes): the next phase starts on a settled server. */
    void settle() throws Exception {
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            st.execute("CHECKPOINT");
            long deadline = System.currentTimeMillis() + 300_000;
            while (System.currentTimeMillis() < deadline) {
                try (var rs = st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")) {
                    rs.next();
                    if (rs.getLong(1) == 0) {
                        return;
                    }
                }
                Thread.sleep(500);
            }
        }
    }

    private void vacuum(String db) {
        try (Connection c = pg.connect(db); Statement st = c.createStatement()) {
            st.execute("VACUUM ANALYZE");
        } catch (SQLException e) {
            log.accept("  VACUUM of " + db + " failed: " + e.getMessage());
        }
    }

    private String scalar(String db, String sql) {
        try (Connection c = pg.connect(db); Statement st = c.createStatement(); var rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            return "? (" + e.getMessage() + ")";
        }
    }

    /** The jar (or directory) this class runs from: the peers run on the same classes. */
    private static String benchJar() {
        try {
            return Path.of(Peers.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
