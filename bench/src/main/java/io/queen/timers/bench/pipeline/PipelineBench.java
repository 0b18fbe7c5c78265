package io.queen.timers.bench.pipeline;

import io.queen.timers.bench.BenchPostgres;
import io.queen.timers.bench.DeployedJvm;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.processes.Launcher;
import io.queen.timers.processes.ManagedProcess;
import io.queen.timers.processes.PostgresProcess;
import io.queen.timers.sweeper.SweeperSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The whole pipeline as deployed (docs/benchmarks.md): a Kafka broker, one bridge and one sweeper as
 * separate processes from the launcher jar, both audit relays on, PostgreSQL durable and sized like a
 * small production server (pg_ctl, a process tree of its own). Producers → broker → bridge → PostgreSQL
 * → sweeper → log, and every verdict and fire back to the audit topic, read here by a plain consumer.
 *
 * <pre>
 * mvn -B -q -pl bench -am package -DskipTests      # also builds local/target/queen-timers.jar
 * java -Xmx1g -cp bench/target/benchmarks.jar io.queen.timers.bench.pipeline.PipelineBench --mode burst [--count 200000] [--jfr]
 * java -Xmx1g -cp bench/target/benchmarks.jar io.queen.timers.bench.pipeline.PipelineBench --mode steady --rate 5000 --seconds 60
 * java -Xmx1g -cp bench/target/benchmarks.jar io.queen.timers.bench.pipeline.PipelineBench --mode steady --rate 2000 --seconds 600 --no-parts --pending 1000000
 * java -Xmx1g -cp bench/target/benchmarks.jar io.queen.timers.bench.pipeline.PipelineBench --mode steady --rate 2000 --seconds 120 --no-parts --backlog 100000 --backlog-at 40
 * java -Xmx1g -cp bench/target/benchmarks.jar io.queen.timers.bench.pipeline.PipelineBench --mode steady --rate 2000 --seconds 60 --cold
 * java -Xmx1g -cp bench/target/benchmarks.jar io.queen.timers.bench.pipeline.PipelineBench --mode single --count 300 --no-parts
 * java -Xmx1g -cp bench/target/benchmarks.jar io.queen.timers.bench.pipeline.PipelineBench --mode series --no-parts --series 5000 --seconds 60 --payload-bytes 2000 [--sweeper-set.sweeper.tenant.fires.per.second 0]
 * </pre>
 *
 * {@code --mode series} (issue 47, point 2): one tenant sends {@code --series} never-ending one-second series (every PT1S, all
 * from the same whole second, {@code --payload-bytes} each; the bridge at recurring.min.period=1s and tenant.max.recurring
 * raised to that many), another tenant a one-shot timer due every 100 ms over the {@code --seconds} measured and one more
 * second. Printed: the quiet tenant's lateness (its fired events' lateMs), the flood's fires per second of the window (frames
 * in the log per second of segment created_at) against its demand and the sweeper's budget
 * ({@code --sweeper-set.sweeper.tenant.fires.per.second}), and CPU per fire.
 *
 * Issue 25's variants: {@code --pending N} stages N timers of a third tenant due a day out before the measured
 * phase (the table and its indexes as a long-running install has them; inserted by SQL, unmeasured);
 * {@code --backlog N --backlog-at S} has a second tenant send N timers due at once S seconds into the steady
 * run, and prints the steady tenant's lateness while that backlog drains and the drain's rate; {@code --cold}
 * skips the warm-up and the parts, so the steady phase begins the moment the services say they run;
 * {@code --mode single} sends one timer due now at a time (linger 0) and waits for its {@code fired} event.
 * Each headline number is also printed as a line {@code figure <label>.<name> <value> <unit>}, which
 * {@code bench/run} appends to {@code bench/results/history.csv}; the label is {@code --label}, or the mode
 * and rate.
 *
 * In one run, on one stack: <b>ingest alone</b> (N schedules due in an hour: first record produced → every
 * offset committed and every {@code scheduled} event on the audit topic), <b>fire alone</b> (those N rows
 * made due at one instant: that instant → last {@code fired} event) and then the measured mode:
 * <b>burst</b> (N schedules over 100 queues, all due at the instant the first is produced) or <b>steady</b>
 * (R schedules per second for T seconds, each due 1–10 s after it is produced). End to end is first record
 * produced → last frame in the log (segment created_at) → last {@code fired} event on the audit topic.
 * Lateness is the relay's {@code lateMs} (segment created_at − deliver_at) of every fired timer. CPU per
 * process from /proc, per 10,000 timers of the phase. {@code --jfr} records the bridge and the sweeper
 * with JDK Flight Recorder and splits their CPU by stage; pg_stat_statements splits PostgreSQL's time by
 * statement.
 */
public final class PipelineBench {

    private static final String COMMANDS = "bench.commands";
    private static final String AUDIT = "queen.timers.audit";
    /** --mode flood: the quiet tenant's own command topic, and that tenant (its audit topic is the default name). */
    private static final String COMMANDS_QUIET = "bench.commands.quiet";
    private static final String QUIET_TENANT = "00000000-0000-0000-0000-00000000000b";
    /** --pending: the tenant whose timers wait a day out (a tenant of its own, so the steady tenant's pending quota is its own). */
    private static final String PENDING_TENANT = "00000000-0000-0000-0000-00000000000c";
    private static final String GROUP = "queen-timers-bridge";
    /** The services' logins: members of queen_bridge / queen_sweeper and nothing more, as deployed (docs/schema-and-roles.md). */
    private static final String BRIDGE_LOGIN = "bench_bridge";
    private static final String SWEEPER_LOGIN = "bench_sweeper";

    private final Map<String, String> opts;
    private final Path workDir;
    /** Where a run's files go (--out; bench/run passes bench/results/<date>/<name>-<commit>): the profile, the peers' and PostgreSQL's logs. */
    private final Path out;
    /** Queues the timers of a phase spread over (--queues, default 100). */
    private final int queues;
    private final boolean profile;
    private PgProfile pgProfile;
    private int bridgeHttp;
    private int sweeperHttp;
    private final long t0 = System.currentTimeMillis();
    private String label;
    private PostgresProcess pg;
    private ManagedProcess broker;
    private ManagedProcess bridge;
    private ManagedProcess sweeper;
    private String bootstrap;

    private PipelineBench(Map<String, String> opts) {
        this.opts = opts;
        this.workDir = Path.of(opts.getOrDefault("work-dir", "bench/target/pipeline-run")).toAbsolutePath();
        this.out = Path.of(opts.getOrDefault("out", workDir.resolve("out").toString())).toAbsolutePath();
        this.queues = Integer.parseInt(opts.getOrDefault("queues", "100"));
        this.profile = opts.containsKey("profile");
    }

    public static void main(String[] args) {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                System.err.println("unexpected argument " + args[i]);
                System.exit(2);
            }
            boolean flag = i + 1 >= args.length || args[i + 1].startsWith("--");
            opts.put(args[i].substring(2), flag ? "true" : args[++i]);
        }
        int code = 0;
        PipelineBench b = new PipelineBench(opts);
        try {
            b.run();
        } catch (Exception e) {
            e.printStackTrace();
            code = 1;
        } finally {
            b.stop();
        }
        System.exit(code);
    }

    private void log(String line) {
        System.out.printf("[%6.1f s] %s%n", (System.currentTimeMillis() - t0) / 1000.0, line);
        System.out.flush();
    }

    private void run() throws Exception {
        String mode = opts.getOrDefault("mode", "burst");
        boolean jfr = opts.containsKey("jfr") || profile;
        boolean peers = opts.containsKey("peers");
        int first = Integer.parseInt(opts.getOrDefault("first", "60"));
        if (peers && (mode.equals("flood") || mode.equals("series"))) {
            throw new IllegalArgumentException("--peers runs with --mode steady, burst or single");
        }
        int count = Integer.parseInt(opts.getOrDefault("count", mode.equals("single") ? "300" : "200000"));
        int rate = Integer.parseInt(opts.getOrDefault("rate", "5000"));
        int seconds = Integer.parseInt(opts.getOrDefault("seconds", "60"));
        int partsCount = Integer.parseInt(opts.getOrDefault("parts-count", mode.equals("burst") ? Integer.toString(count) : "100000"));
        boolean cold = opts.containsKey("cold");
        boolean parts = !opts.containsKey("no-parts") && !cold;
        int pending = Integer.parseInt(opts.getOrDefault("pending", "0"));
        label = opts.getOrDefault("label", (cold ? "cold" : mode) + (mode.equals("steady") ? Integer.toString(rate) : ""));
        Launcher launcher = new Launcher(Path.of(opts.getOrDefault("launcher", "local/target/queen-timers.jar")));
        // the services from the jar the image runs (module cli); the broker needs the launcher jar's embedded Kafka
        Launcher services = new Launcher(Path.of(opts.getOrDefault("service-jar", "cli/target/queen-timers-service.jar")));
        DeployedJvm bridgeJvm = DeployedJvm.of(Path.of(""), "bridge");
        DeployedJvm sweeperJvm = DeployedJvm.of(Path.of(""), "sweeper");

        deleteTree(workDir);
        Files.createDirectories(workDir.resolve("logs"));
        log("PipelineBench " + mode + (mode.equals("burst") ? " " + count + " timers"
                        : mode.equals("single") ? " " + count + " timers, one at a time"
                        : mode.equals("flood") ? " " + count + " back-dated timers of one tenant, " + opts.getOrDefault("quiet", "100")
                                + " due 2 s after they are sent of another"
                        : mode.equals("series") ? " " + opts.getOrDefault("series", "5000") + " one-second series of one tenant ("
                                + opts.getOrDefault("payload-bytes", "2000") + "-byte payloads) beside another's one-shot timer every 100 ms, "
                                + seconds + " s measured"
                        : " " + rate + "/s for " + seconds + " s")
                + " over " + queues + " queues; ingest/fire alone on " + (parts ? partsCount : 0) + (profile ? "; PROFILE" : "")
                + (peers ? "; then peers (a) and (b) on the same PostgreSQL and broker" : "") + "; work dir " + workDir + "; output " + out
                + "; load " + loadavg());
        Files.createDirectories(out);
        pg = new PostgresProcess(workDir, Launcher.freePort(), BenchPostgres.durability(), BenchPostgres.pipelineSettings(profile),
                BenchPostgres.binDir());
        pg.bootstrap();
        log("PostgreSQL: " + BenchPostgres.label(pg));
        int kafkaPort = Launcher.freePort();
        bootstrap = "127.0.0.1:" + kafkaPort;
        List<String> jvm = new ArrayList<>(List.of("-Xmx512m"));
        broker = launcher.broker(workDir.resolve("kafka-data"), kafkaPort, jvm, workDir.resolve("logs/broker.log"));
        broker.start();
        Launcher.awaitPort(kafkaPort, 120_000);
        // the owner migrates and binds the bridge's group to its login with its topics' tenants, read from the bridge's
        // settings, as deployed (a least-privilege login binds no group itself)
        Path declaration = workDir.resolve("bridge-declaration.properties");
        try (var w = Files.newBufferedWriter(declaration)) {
            settings(true).store(w, "the bridge's settings, as `migrate --config` reads its group and topics");
        }
        services.runOnce(List.of("migrate", "--jdbc-url", pg.jdbcUrl(), "--jdbc-user", "postgres", "--config", declaration.toString(),
                "--bridge-login", BRIDGE_LOGIN), workDir.resolve("logs/migrate.log"));
        sql("CREATE ROLE " + BRIDGE_LOGIN + " LOGIN IN ROLE queen_bridge");
        sql("CREATE ROLE " + SWEEPER_LOGIN + " LOGIN IN ROLE queen_sweeper");
        if (profile) {
            sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            pgProfile = new PgProfile(pg::connect, out, this::log);
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(COMMANDS, 4, (short) 1), new NewTopic(AUDIT, 4, (short) 1),
                    new NewTopic(COMMANDS_QUIET, 1, (short) 1), new NewTopic(AUDIT + "." + QUIET_TENANT, 1, (short) 1))).all().get();
        }
        bridgeHttp = Launcher.freePort();
        sweeperHttp = Launcher.freePort();
        bridge = services.service("bridge", "bridge", settings(true), workDir.resolve("bridge.properties"),
                serviceJvm(bridgeJvm, jfr, "bridge"), bridgeJvm.env(), workDir.resolve("logs/bridge.log"));
        sweeper = services.service("sweeper", "sweeper", settings(false), workDir.resolve("sweeper.properties"),
                serviceJvm(sweeperJvm, jfr, "sweeper"), sweeperJvm.env(), workDir.resolve("logs/sweeper.log"));
        bridge.start();
        sweeper.start();
        awaitReady(bridge, bridgeHttp);
        awaitReady(sweeper, sweeperHttp);
        log("broker, bridge, sweeper running as separate processes (pids " + broker.pid() + ", " + bridge.pid() + ", "
                + sweeper.pid() + "), both /health/ready; PostgreSQL postmaster " + pg.postmasterPid());
        log("services as deployed: " + services.launcherJar().getFileName() + " as logins " + BRIDGE_LOGIN + " (IN ROLE queen_bridge) and "
                + SWEEPER_LOGIN + " (IN ROLE queen_sweeper), db.role.check on; JVM " + bridgeJvm.describe()
                + (jfr ? "; JFR settings=profile" : ""));

        Map<String, Object> producerProps = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.LINGER_MS_CONFIG, 5, ProducerConfig.BATCH_SIZE_CONFIG, 65_536, ProducerConfig.ACKS_CONFIG, "all");
        try (AuditWatch audit = new AuditWatch(bootstrap, AUDIT);
                AuditWatch quietAudit = new AuditWatch(bootstrap, AUDIT + "." + QUIET_TENANT);
                KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps, new ByteArraySerializer(), new ByteArraySerializer())) {
            if (cold) {
                log("cold: no warm-up run; the measured phase begins now");
            } else {
                // warm-up: the JITs of every process, the group join, the queues' provisioning are not what is measured
                Result warm = burst(producer, audit, "warm", 20_000);
                log(String.format("warm-up: 20,000 timers end to end in %.1f s (not measured)", warm.seconds()));
                vacuum();
            }
            if (pending > 0) {
                stagePending(pending);
            }
            double ingestRate = 0;
            double fireRate = 0;
            if (parts) {
                if (profile) {
                    pgProfile.resetStatements();
                }
                Result ingest = ingestAlone(producer, audit, partsCount);
                ingestRate = ingest.rate();
                if (profile) {
                    pgProfile.printStatements("ingest-alone", pgProfile.captureStatements(), ingest.timers(), "timer", 15);
                }
                vacuum();
                Result fire = fireAlone(audit, partsCount);
                fireRate = fire.rate();
                vacuum();
            }
            if (mode.equals("steady")) {
                SteadyReport.Measured ours = steady(producer, audit, quietAudit, rate, seconds, first, jfr);
                if (peers) {
                    stopServices();
                    vacuum();
                    Peers p = new Peers(pg, broker, bootstrap, out, this::log);
                    Map<String, Double> a = p.noop(rate, seconds, first);
                    SteadyReport.Measured b = p.job(producer, rate, seconds, first, queues);
                    ratios(ours, a, b);
                }
                return;
            }
            if (profile) {
                pgProfile.resetStatements();
            }
            Instant from = Instant.now();
            Result main = switch (mode) {
                case "burst" -> burst(producer, audit, "burst", count);
                case "flood" -> flood(producer, audit, quietAudit, count, Integer.parseInt(opts.getOrDefault("quiet", "100")));
                case "single" -> single(audit, count);
                case "series" -> series(producer, quietAudit, Integer.parseInt(opts.getOrDefault("series", "5000")), seconds);
                default -> throw new IllegalArgumentException("--mode " + mode + ": burst, steady, single, flood or series");
            };
            Instant to = Instant.now();
            if (!mode.equals("series")) {   // it reports itself: a lateness and a rate of its own, not an end-to-end run
                report(main, ingestRate, fireRate);
            }
            if (profile) {
                pgProfile.printStatements(mode, pgProfile.captureStatements(), main.timers(), "timer", 25);
            }
            if (jfr) {
                stopServices();
                profile(main, from, to);
            }
            if (peers) {
                stopServices();
                vacuum();
                Peers p = new Peers(pg, broker, bootstrap, out, this::log);
                Map<String, Double> a = p.noop(mode, count);
                if (mode.equals("burst")) {
                    double b = p.job("a burst of " + count + " due at once", (meter, events) -> peerBurst(producer, meter, events, count));
                    log(String.format("RATIOS: end to end %,.0f timers/s vs (a) db-scheduler %,.0f tasks/s = %.2f; vs (b) the job on db-scheduler"
                            + " %,.0f timers/s = %.2f", main.rate(), a.get("end_to_end_per_s"), main.rate() / a.get("end_to_end_per_s"), b,
                            main.rate() / b));
                    figure("rate_ratio_vs_dbs", main.rate() / a.get("end_to_end_per_s"), "ratio");
                    figure("rate_ratio_vs_dbsjob", main.rate() / b, "ratio");
                } else {
                    p.job(count + " timers one at a time", (meter, events) -> peerSingle(events, count));
                }
            }
        } finally {
            copyLogs();
        }
    }

    /**
     * Issue 48's ratios, printed as figures under this run's label: ours against (a) db-scheduler's no-op task (services +
     * PostgreSQL against its JVM + PostgreSQL: the target is at most 1.5) and against (b) the same job on db-scheduler
     * (every process, the broker included, on both sides: the target is below 1; and without the broker).
     */
    private void ratios(SteadyReport.Measured ours, Map<String, Double> a, SteadyReport.Measured b) {
        double aCpu = a.get("cpu_us_per_task");
        log(String.format("RATIOS (warm window, per timer / per task): services + PostgreSQL %.0f µs vs (a) db-scheduler no-op %.0f µs = %.2f"
                        + " (target <= 1.5); every process %.0f vs (b) the job on db-scheduler %.0f = %.2f (target < 1); without the broker"
                        + " %.0f vs %.0f = %.2f; p99 warm %.0f vs (a) %.0f / (b) %.0f ms; first minute p99 %.0f vs (a) %.0f / (b) %.0f ms;"
                        + " WAL bytes %.0f vs (a) %.0f / (b) %.0f; WAL records %.1f vs (a) %.1f / (b) %.1f; commits %.2f vs (a) %.2f / (b) %.2f",
                ours.jvmPg(), aCpu, ours.jvmPg() / aCpu, ours.all(), b.all(), ours.all() / b.all(), ours.jvmPg(), b.jvmPg(),
                ours.jvmPg() / b.jvmPg(), ours.p99(), a.get("p99_ms"), b.p99(), ours.firstMinuteP99(), a.get("first_minute_p99_ms"),
                b.firstMinuteP99(), ours.walBytes(), a.get("wal_bytes_per_task"), b.walBytes(), ours.walRecords(), a.get("wal_records_per_task"),
                b.walRecords(), ours.commits(), a.get("commits_per_task"), b.commits()));
        SteadyReport.figure(label, "cpu_ratio_vs_dbs", ours.jvmPg() / aCpu, "ratio");
        SteadyReport.figure(label, "cpu_ratio_vs_dbsjob", ours.all() / b.all(), "ratio");
        SteadyReport.figure(label, "cpu_ratio_without_broker_vs_dbsjob", ours.jvmPg() / b.jvmPg(), "ratio");
        SteadyReport.figure(label, "p99_ratio_vs_dbs", ours.p99() / Math.max(1, a.get("p99_ms")), "ratio");
        SteadyReport.figure(label, "wal_bytes_ratio_vs_dbs", ours.walBytes() / a.get("wal_bytes_per_task"), "ratio");
        SteadyReport.figure(label, "wal_bytes_ratio_vs_dbsjob", ours.walBytes() / b.walBytes(), "ratio");
    }

    /** PostgreSQL's log (its checkpoints and autovacuums, with times) and the services' into the run's output. */
    private void copyLogs() {
        for (String f : List.of("postgres.log", "bridge.log", "sweeper.log", "broker.log")) {
            Path from = workDir.resolve("logs").resolve(f);
            try {
                if (Files.isRegularFile(from) && Files.size(from) < 20_000_000) {
                    Files.createDirectories(out);
                    // .txt: the repository ignores *.log, and a run's folder is committed whole
                    Files.copy(from, out.resolve(f.replace(".log", "-log.txt")), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            } catch (java.io.IOException e) {
                log("cannot copy " + from + ": " + e.getMessage());
            }
        }
    }

    private List<String> serviceJvm(DeployedJvm jvm, boolean jfr, String role) {
        List<String> options = new ArrayList<>(jvm.imageFlags());
        if (jfr) {
            options.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename=" + out.resolve(role + ".jfr"));
        }
        return options;
    }

    /** Until the service's /health/ready answers 200 (what Kubernetes' readiness probe waits for). */
    private void awaitReady(ManagedProcess p, int httpPort) throws InterruptedException {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.net.URI uri = java.net.URI.create("http://127.0.0.1:" + httpPort + "/health/ready");
        long deadline = System.currentTimeMillis() + 180_000;
        while (System.currentTimeMillis() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException(p.name() + " exited (see " + p.logFile() + ")");
            }
            try {
                if (http.send(java.net.http.HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2)).build(),
                        java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (java.io.IOException notYet) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException(p.name() + " not ready within 180 s (see " + p.logFile() + ")");
    }

    private Properties settings(boolean isBridge) {
        Properties p = new Properties();
        p.put("jdbc.url", pg.jdbcUrl());
        // least privilege, db.role.check at its default (on): as deployed (docs/schema-and-roles.md#database-roles)
        p.put("jdbc.user", isBridge ? BRIDGE_LOGIN : SWEEPER_LOGIN);
        p.put("kafka.bootstrap.servers", bootstrap);
        p.put("http.port", Integer.toString(isBridge ? bridgeHttp : sweeperHttp));
        p.put("audit.topic", AUDIT);
        if (isBridge) {
            p.put("command.topics", COMMANDS + "," + COMMANDS_QUIET);
            p.put("command.topic.tenants", COMMANDS_QUIET + "=" + QUIET_TENANT); // the flood (and every other mode) is the default tenant's
            p.put("bridge.default.tenant.allowed", "true");
            p.put("bridge.start.position", "earliest"); // the bench's own topic: what it sends before the group's first join is applied
        }
        if (isBridge && "series".equals(opts.get("mode"))) {
            p.put("recurring.min.period", "1s"); // issue 47's case: the floor a deployment may allow, and a raised cap
            p.put("tenant.max.recurring", opts.getOrDefault("series", "5000"));
        }
        for (Map.Entry<String, String> e : opts.entrySet()) {
            String prefix = isBridge ? "bridge-set." : "sweeper-set.";
            if (e.getKey().startsWith(prefix)) {
                p.put(e.getKey().substring(prefix.length()), e.getValue()); // --bridge-set.x y: an experiment, printed
            }
        }
        return p;
    }

    record Cpu(double broker, double bridge, double sweeper, double postgres, double bench) {
        Cpu minus(Cpu o) {
            return new Cpu(broker - o.broker, bridge - o.bridge, sweeper - o.sweeper, postgres - o.postgres, bench - o.bench);
        }
    }

    record Result(String phase, long timers, double seconds, double logSeconds, List<Long> lateMs, Cpu cpu, String load) {
        double rate() {
            return timers / seconds;
        }
    }

    private Cpu cpu() {
        return new Cpu(ProcCpu.seconds(broker.pid()), ProcCpu.seconds(bridge.pid()), ProcCpu.seconds(sweeper.pid()),
                ProcCpu.treeSeconds(pg.postmasterPid()), ProcCpu.seconds(ProcessHandle.current().pid()));
    }

    /** N schedules over 100 queues, all due at the instant the first is produced. */
    private Result burst(KafkaProducer<byte[], byte[]> producer, AuditWatch audit, String phase, int n) throws Exception {
        Cpu c0 = cpu();
        long start = System.currentTimeMillis();
        Instant due = Instant.ofEpochMilli(start);
        send(producer, n, i -> TimerCommand.schedule(queue(phase, i), "k" + i).at(due).txn("txn-" + phase + "-" + i).payload(payload(i)), phase, null);
        AuditWatch.Phase ph = audit.phase(phase);
        audit.await("fired", ph.fired, n, Duration.ofMinutes(20));
        Cpu used = cpu().minus(c0);
        double seconds = (ph.lastFiredMs - start) / 1000.0;
        double logSeconds = (lastFrameMs(phase) - start) / 1000.0;
        return new Result(phase, n, seconds, logSeconds, new ArrayList<>(ph.lateMs), used, loadavg());
    }

    /**
     * R per second for T seconds over the queues, each due 1-10 s after it is produced, measured by {@link SteadyFeed} and
     * reported by {@link SteadyReport} (the first {@code first} seconds and the warm window after them). With {@code --backlog N},
     * another tenant sends N timers due at once {@code --backlog-at} seconds in, on its own command topic, as fast as the
     * producer takes them. With --profile: statements over the first minute and over the warm window, wait events and
     * the per-second timeline from the start, checkpoints and table activity per window; with --jfr (or --profile) each
     * service's flight recording over the warm window, once the services have stopped.
     */
    private SteadyReport.Measured steady(KafkaProducer<byte[], byte[]> producer, AuditWatch audit, AuditWatch quietAudit, int rate, int seconds,
            int first, boolean jfr) throws Exception {
        int backlog = Integer.parseInt(opts.getOrDefault("backlog", "0"));
        long backlogAtMs = Long.parseLong(opts.getOrDefault("backlog-at", Integer.toString(seconds / 3))) * 1000;
        long start = System.currentTimeMillis();
        long[] backlogStart = new long[1];
        AtomicReference<Exception> backlogFailed = new AtomicReference<>();
        Thread backlogProducer = new Thread(() -> {
            try {
                Thread.sleep(backlogAtMs);
                backlogStart[0] = System.currentTimeMillis();
                Instant due = Instant.ofEpochMilli(backlogStart[0]);
                send(producer, COMMANDS_QUIET, backlog, i -> TimerCommand.schedule(queue("backlog", i), "k" + i).at(due)
                        .txn("txn-backlog-" + i).payload(payload(i)), "backlog", null);
                log(String.format("backlog: %,d timers due at once produced in %.1f s by tenant %s", backlog,
                        (System.currentTimeMillis() - backlogStart[0]) / 1000.0, QUIET_TENANT));
            } catch (Exception e) {
                backlogFailed.compareAndSet(null, e);
            }
        }, "backlog-producer");
        if (backlog > 0) {
            backlogProducer.start();
        }
        Map<String, java.util.function.DoubleSupplier> cpu = new LinkedHashMap<>();
        cpu.put("bridge", () -> ProcCpu.seconds(bridge.pid()));
        cpu.put("sweeper", () -> ProcCpu.seconds(sweeper.pid()));
        cpu.put(SteadyReport.POSTGRES, () -> ProcCpu.treeSeconds(pg.postmasterPid()));
        cpu.put(SteadyReport.BROKER, () -> ProcCpu.seconds(broker.pid()));
        SteadyReport.Meter meter = new SteadyReport.Meter(cpu, pg::connect);
        List<List<PgProfile.StatementRow>> statements = new ArrayList<>();
        List<PgProfile.Stats> stats = new ArrayList<>();
        List<Map<String, Map<String, Double>>> threads = new ArrayList<>(); // per mark: role -> thread -> CPU s
        if (profile) {
            pgProfile.resetStatements();
            stats.add(pgProfile.stats());
            pgProfile.start(System.currentTimeMillis());
        }
        java.util.function.Consumer<SteadyReport.Snapshot> mark = snapshot -> {
            if (profile) {
                try {
                    statements.add(pgProfile.captureStatements());
                    pgProfile.resetStatements();
                    stats.add(pgProfile.stats());
                    threads.add(Map.of("bridge", ProcCpu.threads(bridge.pid()), "sweeper", ProcCpu.threads(sweeper.pid()),
                            "broker", ProcCpu.threads(broker.pid())));
                } catch (SQLException e) {
                    throw new IllegalStateException("profile: " + e.getMessage(), e);
                }
            }
        };
        SteadyReport.Run run = SteadyFeed.run(new SteadyFeed.Settings(label, "QUEEN-TIMERS (bridge + sweeper)", COMMANDS, "steady", queues, rate,
                seconds, first, Duration.ofMinutes(20)), producer, audit, meter, mark, mark, this::log);
        if (run.firedAt().length < run.items()) {
            throw new IllegalStateException("not every steady timer fired within 20 minutes of the feed's end");
        }
        SteadyReport.Measured measured = SteadyReport.report(run, this::log);
        if (backlog > 0) {
            backlogProducer.join();
            if (backlogFailed.get() != null) {
                throw new IllegalStateException("producing the backlog failed", backlogFailed.get());
            }
            AuditWatch.Phase ph = audit.phase("steady");
            AuditWatch.Phase b = quietAudit.phase("backlog");
            quietAudit.await("backlog fired", b.fired, backlog, Duration.ofMinutes(20));
            double drain = (b.lastFiredMs - backlogStart[0]) / 1000.0;
            List<Long> during = ph.lateBetween(backlogStart[0], b.lastFiredMs);
            List<Long> before = ph.lateBetween(start, backlogStart[0]);
            log(String.format("BACKLOG of %,d timers due at once (tenant %s), sent %.1f s into the run: drained in %.2f s = %,.0f timers/s;"
                    + " the steady tenant's timers fired meanwhile (%,d): lateness p50 %d ms, p99 %d ms, p99.9 %d ms, max %d ms"
                    + " (before it, %,d: p99 %d ms; target during: p99 <= 100 ms)", backlog, QUIET_TENANT, (backlogStart[0] - start) / 1000.0,
                    drain, backlog / drain, during.size(), pct(during, 0.50), pct(during, 0.99), pct(during, 0.999), pct(during, 1.0),
                    before.size(), pct(before, 0.99)));
            figure("backlog_drain_per_s", backlog / drain, "timers/s");
            figure("steady_p99_during_backlog_ms", pct(during, 0.99), "ms");
            figure("steady_p999_during_backlog_ms", pct(during, 0.999), "ms");
        }
        if (profile) {
            pgProfile.close();
            long w0 = run.windowStart().atMs();
            long w1 = run.feedEnd().atMs();
            double firstUnits = units(run, run.feedStart().atMs(), w0);
            double warmUnits = units(run, w0, w1);
            pgProfile.printStatements("first-minute", statements.get(0), firstUnits, "timer", 25);
            pgProfile.printStatements("warm", statements.get(1), warmUnits, "timer", 40);
            pgProfile.printStats("first-minute", stats.get(0), stats.get(1), firstUnits, "timer");
            pgProfile.printStats("warm", stats.get(1), stats.get(2), warmUnits, "timer");
            pgProfile.writeWaitEvents();
            timeline(run);
            threadCpu(threads.get(0), threads.get(1), warmUnits);
        }
        if (jfr) {
            stopServices();
            double units = units(run, run.windowStart().atMs(), run.feedEnd().atMs());
            for (String role : List.of("bridge", "sweeper")) {
                Path file = out.resolve(role + ".jfr");
                if (Files.isRegularFile(file)) {
                    JfrSummary.summarize(role, file, Instant.ofEpochMilli(run.windowStart().atMs()), Instant.ofEpochMilli(run.feedEnd().atMs()),
                            run.feedEnd().cpu().get(role) - run.windowStart().cpu().get(role), units, "timer", out.resolve(role + "-jfr.txt"),
                            this::log);
                } else {
                    log("  no flight recording of " + role + " at " + file);
                }
            }
        }
        return measured;
    }

    /** Each service's (and the broker's) CPU per thread over the warm window, from /proc: printed and written to threads.tsv. */
    private void threadCpu(Map<String, Map<String, Double>> from, Map<String, Map<String, Double>> to, double units) {
        List<String> lines = new ArrayList<>(List.of("process\tthread\tcpu_us_per_timer"));
        log(String.format("  CPU by thread over the warm window (/proc/<pid>/task; µs per timer over %,.0f timers of work):", units));
        for (String role : List.of("bridge", "sweeper", "broker")) {
            Map<String, Double> a = from.get(role);
            List<Map.Entry<String, Double>> rows = new ArrayList<>();
            to.get(role).forEach((k, v) -> rows.add(Map.entry(k, (v - a.getOrDefault(k, 0.0)) * 1e6 / units)));
            rows.sort(Map.Entry.<String, Double>comparingByValue().reversed());
            StringBuilder b = new StringBuilder();
            for (Map.Entry<String, Double> e : rows) {
                lines.add(role + "\t" + e.getKey() + "\t" + String.format(java.util.Locale.ROOT, "%.1f", e.getValue()));
                if (e.getValue() >= 1.0) {
                    b.append(String.format("%s %.0f, ", e.getKey(), e.getValue()));
                }
            }
            log("    " + role + ": " + b);
        }
        pgProfile.write("threads.tsv", lines);
    }

    /** The work a window did: (timers scheduled in it + timers fired in it) / 2, as SteadyReport counts it. */
    private static double units(SteadyReport.Run r, long from, long to) {
        long n = java.util.Arrays.stream(r.scheduledAt()).filter(t -> t >= from && t < to).count()
                + java.util.Arrays.stream(r.firedAt()).filter(t -> t >= from && t < to).count();
        return Math.max(1, n / 2.0);
    }

    /**
     * timeline.tsv: per second since ready, what fired in it (count, p99, max lateness) beside what PostgreSQL was doing
     * (average backends by class, autovacuum, checkpointer, WAL); and the ten seconds with the latest fires printed.
     */
    private void timeline(SteadyReport.Run r) {
        long t0 = r.feedStart().atMs();
        Map<Long, List<Long>> late = new java.util.TreeMap<>();
        for (int i = 0; i < r.firedAt().length; i++) {
            late.computeIfAbsent((r.firedAt()[i] - t0) / 1000, k -> new ArrayList<>()).add(r.lateMs()[i]);
        }
        Map<Long, PgProfile.Second> pgs = pgProfile.seconds();
        java.util.Set<String> classes = new java.util.TreeSet<>();
        pgs.values().forEach(s -> classes.addAll(s.byClass.keySet()));
        List<String> lines = new ArrayList<>();
        lines.add("second\tfired\tp99_late_ms\tmax_late_ms\tingest_lag\tdue_not_fired\toutbox_rows\twal_kb\tcheckpointer_active\t"
                + String.join("\t", classes) + "\tautovacuum");
        int rate = r.items() / Math.max(1, (int) Math.round((r.feedEnd().atMs() - r.feedStart().atMs()) / 1000.0));
        long appliedBefore = pgs.values().stream().filter(x -> x.applied >= 0).mapToLong(x -> x.applied).findFirst().orElse(0);
        List<String[]> rows = new ArrayList<>();
        long lastSecond = Math.max(late.isEmpty() ? 0 : ((java.util.TreeMap<Long, List<Long>>) late).lastKey(),
                pgs.isEmpty() ? 0 : ((java.util.TreeMap<Long, PgProfile.Second>) pgs).lastKey());
        for (long sec = 0; sec <= lastSecond; sec++) {
            List<Long> l = new ArrayList<>(late.getOrDefault(sec, List.of()));
            Collections.sort(l);
            PgProfile.Second p = pgs.get(sec);
            PgProfile.Second next = pgs.get(sec + 1);
            StringBuilder b = new StringBuilder();
            b.append(sec).append('\t').append(l.size()).append('\t').append(pct(l, 0.99)).append('\t').append(pct(l, 1.0)).append('\t');
            // produced by the start of this second (the feed's pace) minus applied: commands waiting in Kafka
            long produced = Math.min(r.items(), (long) rate * sec);
            b.append(p == null || p.applied < 0 ? "" : Long.toString(Math.max(0, produced - (p.applied - appliedBefore)))).append('\t');
            b.append(p == null || p.dueBacklog < 0 ? "" : Long.toString(p.dueBacklog)).append('\t');
            b.append(p == null || p.outboxRows < 0 ? "" : Long.toString(p.outboxRows)).append('\t');
            b.append(p != null && next != null && p.walLsn >= 0 && next.walLsn >= 0 ? (next.walLsn - p.walLsn) / 1024 : -1).append('\t');
            b.append(p == null ? "" : String.format(java.util.Locale.ROOT, "%.2f", p.checkpointing / (double) Math.max(1, p.samples)));
            for (String c : classes) {
                b.append('\t').append(p == null ? "" : String.format(java.util.Locale.ROOT, "%.2f",
                        p.byClass.getOrDefault(c, 0L) / (double) Math.max(1, p.samples)));
            }
            b.append('\t').append(p == null ? "" : String.join(" ", p.vacuuming));
            lines.add(b.toString());
            rows.add(b.toString().split("\t", -1));
        }
        pgProfile.write("timeline.tsv", lines);
        log("  the 10 seconds with the latest fires (timeline.tsv: " + lines.get(0).replace('\t', ' ') + "):");
        rows.stream().sorted((x, y) -> Long.compare(Long.parseLong(y[3]), Long.parseLong(x[3]))).limit(10)
                .forEach(row -> log("    " + String.join(" ", row)));
    }

    /** Peer (b) beside the burst: n commands due at the instant the first is produced → the last fired event. Returns its rate. */
    private double peerBurst(KafkaProducer<byte[], byte[]> producer, SteadyReport.Meter meter, AuditWatch events, int n) throws Exception {
        // as ours: after 20,000 end to end, unmeasured
        Instant warmDue = Instant.now();
        send(producer, Peers.JOB_COMMANDS, 20_000, i -> TimerCommand.schedule(queue("dbswarm", i), "k" + i).at(warmDue).txn("txn-dbswarm-" + i)
                .payload(payload(i)), "dbs-job warm-up", null);
        events.await("fired", events.phase("dbswarm").fired, 20_000, Duration.ofMinutes(20));
        log(String.format("(b) warm-up: 20,000 timers end to end in %.1f s (not measured)",
                (events.phase("dbswarm").lastFiredMs - warmDue.toEpochMilli()) / 1000.0));
        SteadyReport.Snapshot s0 = meter.snap();
        Instant due = Instant.ofEpochMilli(s0.atMs());
        send(producer, Peers.JOB_COMMANDS, n, i -> TimerCommand.schedule(queue("dbsjob", i), "k" + i).at(due).txn("txn-dbsjob-" + i)
                .payload(payload(i)), "dbs-job burst", null);
        AuditWatch.Phase ph = events.phase("dbsjob");
        events.await("fired", ph.fired, n, Duration.ofMinutes(30));
        SteadyReport.Snapshot s1 = meter.snap();
        double seconds = (ph.lastFiredMs - s0.atMs()) / 1000.0;
        long[] late = SteadyReport.longs(ph.lateMs);
        java.util.Arrays.sort(late);
        StringBuilder cpu = new StringBuilder();
        double total = 0;
        for (String k : s1.cpu().keySet()) {
            double us = (s1.cpu().get(k) - s0.cpu().get(k)) * 1e6 / n;
            total += us;
            cpu.append(String.format("%s %.0f, ", k, us));
        }
        log(String.format("DB-SCHEDULER JOB BURST (b): %,d commands due at once, the last fired event %.2f s after the first was produced"
                + " = %,.0f timers/s end to end; lateness %s; CPU µs per timer: %sall %.0f", n, seconds, n / seconds,
                SteadyReport.percentiles(late), cpu, total));
        SteadyReport.figure("dbsjobburst", "end_to_end_per_s", n / seconds, "timers/s");
        SteadyReport.figure("dbsjobburst", "cpu_us_per_timer", total, "us");
        SteadyReport.figure("dbsjobburst", "p99_ms", SteadyReport.pct(late, 0.99), "ms");
        return n / seconds;
    }

    /** Peer (b) beside single: one command due now at a time (no linger), 100 ms apart: produced → its fired event. */
    private Void peerSingle(AuditWatch events, int n) throws Exception {
        Map<String, Object> props = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.LINGER_MS_CONFIG, 0,
                ProducerConfig.ACKS_CONFIG, "all");
        AuditWatch.Phase ph = events.phase("dbsjob");
        long[] toFired = new long[n];
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < n; i++) {
                long sent = System.currentTimeMillis();
                producer.send(TimerCommand.schedule("dbsjob.q0", "s" + i).at(Instant.ofEpochMilli(sent)).txn("txn-dbsjob-single-" + i)
                        .payload(payload(i)).envelope(Peers.JOB_COMMANDS)).get();
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (ph.fired.get() < i + 1) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("peer (b): single timer " + i + " not fired within 30 s");
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(200_000);
                }
                toFired[i] = ph.lastFiredMs - sent;
                Thread.sleep(100);
            }
        }
        java.util.Arrays.sort(toFired);
        log(String.format("DB-SCHEDULER JOB SINGLE (b): %d commands one at a time, due when produced: produced → fired event %s", n,
                SteadyReport.percentiles(toFired)));
        SteadyReport.figure("dbsjobsingle", "to_fired_event_p50_ms", SteadyReport.pct(toFired, 0.5), "ms");
        SteadyReport.figure("dbsjobsingle", "to_fired_event_p99_ms", SteadyReport.pct(toFired, 0.99), "ms");
        return null;
    }

    /**
     * One timer at a time, due the instant it is produced, from a producer that does not linger: produced → its
     * {@code fired} event (the relay's broker timestamp) and → its frame in the log (segment created_at). 100 ms apart.
     */
    private Result single(AuditWatch audit, int n) throws Exception {
        Map<String, Object> props = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.LINGER_MS_CONFIG, 0,
                ProducerConfig.ACKS_CONFIG, "all");
        List<Long> toFired = new ArrayList<>();
        List<Long> toLog = new ArrayList<>();
        AuditWatch.Phase ph = audit.phase("single");
        Cpu c0 = cpu();
        long start = System.currentTimeMillis();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < n; i++) {
                long sent = System.currentTimeMillis();
                producer.send(TimerCommand.schedule("single.q0", "k" + i).at(Instant.ofEpochMilli(sent)).txn("txn-single-" + i)
                        .payload(payload(i)).envelope(COMMANDS)).get();
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (ph.fired.get() < i + 1) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("single timer " + i + " not fired within 30 s");
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(200_000);
                }
                toFired.add(ph.lastFiredMs - sent);
                toLog.add(lastFrameMs("single") - sent);
                Thread.sleep(100);
            }
        }
        Cpu used = cpu().minus(c0);
        Collections.sort(toFired);
        Collections.sort(toLog);
        log(String.format("SINGLE: %d timers one at a time, due when produced: produced → frame in the log p50 %d ms, p99 %d ms;"
                + " produced → fired event p50 %d ms, p99 %d ms, max %d ms (target p50 <= 15 ms)", n, pct(toLog, 0.5), pct(toLog, 0.99),
                pct(toFired, 0.5), pct(toFired, 0.99), pct(toFired, 1.0)));
        figure("to_log_p50_ms", pct(toLog, 0.5), "ms");
        figure("to_fired_event_p50_ms", pct(toFired, 0.5), "ms");
        figure("to_fired_event_p99_ms", pct(toFired, 0.99), "ms");
        return new Result("single", n, (ph.lastFiredMs - start) / 1000.0, (lastFrameMs("single") - start) / 1000.0,
                new ArrayList<>(ph.lateMs), used, loadavg());
    }

    /** --pending: n timers of their own tenant due a day out (spread over a day), staged by SQL and vacuumed; not measured. */
    private void stagePending(int n) throws SQLException {
        long t = System.currentTimeMillis();
        sql("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT '" + PENDING_TENANT + "', 'pending.q' || (g % " + queues + "), 'k' || g,"
                + " now() + interval '1 day' + g * interval '86 ms', 'txn-pending-' || g, gen_random_uuid(),"
                + " convert_to(rpad('{\"n\":' || g || ',\"pad\":\"', 198, 'x') || '\"}', 'UTF8')"
                + " FROM generate_series(1, " + n + ") g");
        vacuum();
        log(String.format("pending: %,d timers of tenant %s staged due a day out, in %.1f s (not measured)", n, PENDING_TENANT,
                (System.currentTimeMillis() - t) / 1000.0));
    }

    /**
     * Issue 24, point 8, through the whole pipeline: the default tenant floods n schedules back-dated to 1970 (as fast
     * as the producer takes them) while, 1 s in, another tenant, on its own command topic, schedules {@code quiet} timers
     * due 2 s later. Prints the quiet tenant's lateness (its fired events on its own audit topic) and the flood's drain.
     */
    private Result flood(KafkaProducer<byte[], byte[]> producer, AuditWatch audit, AuditWatch quietAudit, int n, int quiet) throws Exception {
        Cpu c0 = cpu();
        long start = System.currentTimeMillis();
        Instant backdated = Instant.parse("1970-01-01T00:00:01Z");
        AtomicReference<Exception> quietFailed = new AtomicReference<>();
        Thread quietProducer = new Thread(() -> {
            try {
                Thread.sleep(1_000);
                Instant due = Instant.now().plusSeconds(2);
                for (int i = 0; i < quiet; i++) {
                    producer.send(TimerCommand.schedule("quiet.q" + (i % 10), "k" + i).at(due).txn("txn-quiet-" + i).payload(payload(i))
                            .envelope(COMMANDS_QUIET), (m, e) -> {
                                if (e != null) {
                                    quietFailed.compareAndSet(null, e);
                                }
                            });
                }
                producer.flush();
                log(String.format("quiet tenant: %d timers produced %.1f s into the flood, due at %s", quiet,
                        (System.currentTimeMillis() - start) / 1000.0, due));
            } catch (Exception e) {
                quietFailed.compareAndSet(null, e);
            }
        }, "quiet-producer");
        quietProducer.start();
        send(producer, n, i -> TimerCommand.schedule(queue("flood", i), "k" + i).at(backdated).txn("txn-flood-" + i).payload(payload(i)),
                "flood", null);
        log(String.format("flood: %,d back-dated timers produced in %.1f s", n, (System.currentTimeMillis() - start) / 1000.0));
        quietProducer.join();
        if (quietFailed.get() != null) {
            throw new IllegalStateException("producing the quiet tenant's timers failed", quietFailed.get());
        }
        AuditWatch.Phase q = quietAudit.phase("quiet");
        quietAudit.await("quiet fired", q.fired, quiet, Duration.ofMinutes(5));
        AuditWatch.Phase ph = audit.phase("flood");
        audit.await("fired", ph.fired, n, Duration.ofMinutes(20));
        Cpu used = cpu().minus(c0);
        List<Long> late = new ArrayList<>(q.lateMs);
        Collections.sort(late);
        log(String.format("QUIET tenant (%s): %d timers, lateness p50 %d ms, p99 %d ms, max %d ms (target p99 <= 200 ms);"
                + " its last scheduled verdict on the audit topic %.2f s after the flood began (due at 3 s: ingest, not fire, when later)",
                QUIET_TENANT, late.size(), pct(late, 0.50), pct(late, 0.99), late.get(late.size() - 1), (q.lastScheduledMs - start) / 1000.0));
        return new Result("flood", n, (ph.lastFiredMs - start) / 1000.0, (lastFrameMs("flood") - start) / 1000.0,
                new ArrayList<>(ph.lateMs), used, loadavg());
    }

    /**
     * Issue 47's fairness case: {@code series} one-second series of one tenant (the default tenant, {@link #COMMANDS}), all from
     * the same whole second, beside the quiet tenant's one-shot timer every 100 ms ({@link #COMMANDS_QUIET}) from the series'
     * first second to a second past the window (so it always has one within sweeper.sleep.near). Both are sent and staged
     * before the first is due. Measured: the quiet tenant's lateness (its fired events), the flood's frames in the log per
     * second of the window (segment created_at) against its demand (series a second) and the budget.
     */
    private Result series(KafkaProducer<byte[], byte[]> producer, AuditWatch quietAudit, int series, int seconds) throws Exception {
        int payloadBytes = Integer.parseInt(opts.getOrDefault("payload-bytes", "2000"));
        // the sweeper's own default unless the run sets one: the budget as shipped is what `bench/run series` measures
        String set = opts.get("sweeper-set." + SweeperSettings.TENANT_FIRES_PER_SECOND);
        String budget = set != null ? set : SweeperSettings.definition().key(SweeperSettings.TENANT_FIRES_PER_SECOND).defaultValue();
        String budgetFrom = set != null ? "set" : "the default";
        int quiet = (seconds + 1) * 10;
        Instant start = Instant.now().plusSeconds(15).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        // hex digits of a seeded random, not one repeated letter: a payload that compresses as JSON does (about half), not to nothing
        send(producer, series, i -> TimerCommand.schedule(queue("series", i), "s" + i).every(Duration.ofSeconds(1)).startAt(start)
                .txn("txn-series-" + i).payload(String.format("{\"i\":%10d,\"pad\":\"%s\"}", i, hex(new Random(i), payloadBytes - 30))),
                "series", null);
        send(producer, COMMANDS_QUIET, quiet, i -> TimerCommand.schedule(queue("quiet", i), "k" + i).at(start.plusMillis(100L * i))
                .txn("txn-quiet-" + i).payload(payload(i)), "quiet", null);
        log(String.format("series: %,d one-second series (%,d-byte payloads) from %s and %,d quiet timers every 100 ms sent; budget"
                + " sweeper.tenant.fires.per.second=%s (%s)", series, payloadBytes, start, quiet, budget, budgetFrom));
        long staged;
        while ((staged = longOf("SELECT count(*) FROM queen.log_timers WHERE queue LIKE 'series.%' OR queue LIKE 'quiet.%'")) < series + quiet) {
            if (Instant.now().isAfter(start)) {
                throw new IllegalStateException("only " + staged + " of " + (series + quiet) + " staged before the first was due: send fewer");
            }
            Thread.sleep(100);
        }
        log(String.format("all staged %.1f s before the first is due", Duration.between(Instant.now(), start).toMillis() / 1000.0));
        Thread.sleep(Math.max(0, Duration.between(Instant.now(), start).toMillis()));
        Cpu c0 = cpu();
        AuditWatch.Phase q = quietAudit.phase("quiet");
        quietAudit.await("quiet fired", q.fired, quiet, Duration.ofSeconds(seconds + 120L));
        Cpu used = cpu().minus(c0);
        long end = start.plusSeconds(seconds).toEpochMilli();
        List<long[]> perSecond = new ArrayList<>();
        try (Connection c = pg.connect(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT floor(extract(epoch FROM s.created_at))::bigint AS sec, sum(s.end_offset - s.base_offset + 1)"
                        + " FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id"
                        + " WHERE q.name LIKE 'series.%' AND s.created_at >= to_timestamp(" + start.getEpochSecond() + ")"
                        + " AND s.created_at < to_timestamp(" + end / 1000 + ") GROUP BY 1 ORDER BY 1")) {
            while (rs.next()) {
                perSecond.add(new long[] {rs.getLong(1), rs.getLong(2)});
            }
        }
        long floodFires = perSecond.stream().mapToLong(f -> f[1]).sum();
        long maxSecond = perSecond.stream().mapToLong(f -> f[1]).max().orElse(0);
        List<Long> late = new ArrayList<>(q.lateMs);
        Collections.sort(late);
        log(String.format("QUIET tenant (%s): %d timers, one every 100 ms: lateness p50 %d ms, p99 %d ms, p99.9 %d ms, max %d ms"
                + " (target p99 <= 200 ms)", QUIET_TENANT, late.size(), pct(late, 0.50), pct(late, 0.99), pct(late, 0.999), pct(late, 1.0)));
        log(String.format("FLOOD: %,d series due every second (demand %,d fires/s); fired %,d in the %d s window = %,.0f/s; busiest second %,d;"
                + " budget %s/s (%s; 0: none)", series, series, floodFires, seconds, floodFires / (double) seconds, maxSecond, budget, budgetFrom));
        StringBuilder b = new StringBuilder("  flood fires per second of the window:");
        for (long[] f : perSecond) {
            b.append(' ').append(f[1]);
        }
        log(b.toString());
        log(String.format("  CPU seconds in the window: broker %.1f, bridge %.1f, sweeper %.1f, PostgreSQL %.1f; %.0f CPU µs per flood fire (all four)",
                used.broker(), used.bridge(), used.sweeper(), used.postgres(),
                (used.broker() + used.bridge() + used.sweeper() + used.postgres()) * 1e6 / Math.max(1, floodFires)));
        log("  load average at the end: " + loadavg() + " (2 cores, shared)");
        figure("quiet_p50_ms", pct(late, 0.50), "ms");
        figure("quiet_p99_ms", pct(late, 0.99), "ms");
        figure("quiet_max_ms", pct(late, 1.0), "ms");
        figure("flood_fires_per_s", floodFires / (double) seconds, "fires/s");
        figure("flood_busiest_second", maxSecond, "fires");
        return new Result("series", floodFires, seconds, seconds, late, used, loadavg());
    }

    private static String hex(Random random, int n) {
        StringBuilder b = new StringBuilder(Math.max(0, n));
        for (int i = 0; i < n; i++) {
            b.append(Character.forDigit(random.nextInt(16), 16));
        }
        return b.toString();
    }

    /** N schedules due in an hour: produced → every offset committed and every scheduled event published. */
    private Result ingestAlone(KafkaProducer<byte[], byte[]> producer, AuditWatch audit, int n) throws Exception {
        long committedBefore = longOf("SELECT coalesce(sum(next_offset), 0) FROM queen.bridge_offsets WHERE group_id = '" + GROUP + "'");
        Cpu c0 = cpu();
        long start = System.currentTimeMillis();
        Instant due = Instant.ofEpochMilli(start).plus(Duration.ofHours(1));
        send(producer, n, i -> TimerCommand.schedule(queue("ingest", i), "k" + i).at(due).txn("txn-ingest-" + i).payload(payload(i)), "ingest", null);
        long committedAt;
        while (true) {
            long done = longOf("SELECT coalesce(sum(next_offset), 0) FROM queen.bridge_offsets WHERE group_id = '" + GROUP + "'");
            if (done - committedBefore >= n) {
                committedAt = System.currentTimeMillis();
                break;
            }
            Thread.sleep(20);
        }
        AuditWatch.Phase ph = audit.phase("ingest");
        audit.await("scheduled", ph.scheduled, n, Duration.ofMinutes(20));
        Cpu used = cpu().minus(c0);
        double seconds = (Math.max(committedAt, ph.lastScheduledMs) - start) / 1000.0;
        Result r = new Result("ingest alone", n, seconds, (committedAt - start) / 1000.0, List.of(), used, loadavg());
        log(String.format("INGEST ALONE: %,d schedules in %.2f s = %,.0f commands/s (committed %.2f s = %,.0f/s; scheduled events on the"
                + " audit topic %.2f s); CPU s per 10,000: %s; load %s", n, r.seconds(), r.rate(), r.logSeconds(), n / r.logSeconds(),
                (ph.lastScheduledMs - start) / 1000.0, per10k(used, n), r.load()));
        return r;
    }

    /** The ingest phase's N rows made due at one instant (2 s ahead, with the bridge's wake-up): that instant → last fired event. */
    private Result fireAlone(AuditWatch audit, int n) throws Exception {
        long due;
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            c.setAutoCommit(false);
            try (ResultSet rs = st.executeQuery("SELECT (extract(epoch FROM now() + interval '2 s') * 1000)::bigint")) {
                rs.next();
                due = rs.getLong(1);
            }
            int updated = st.executeUpdate("UPDATE queen.log_timers SET deliver_at = now() + interval '2 s' WHERE queue LIKE 'ingest.%'");
            st.execute("SELECT pg_notify('queen_timers_wake', '')");
            c.commit();
            if (updated != n) {
                throw new IllegalStateException("fire alone: " + updated + " ingest rows, expected " + n);
            }
        }
        sql("VACUUM ANALYZE queen.log_timers");
        Thread.sleep(Math.max(0, due - System.currentTimeMillis()));
        Cpu c0 = cpu();
        AuditWatch.Phase ph = audit.phase("ingest");
        audit.await("fired", ph.fired, n, Duration.ofMinutes(20));
        Cpu used = cpu().minus(c0);
        Result r = new Result("fire alone", n, (ph.lastFiredMs - due) / 1000.0, (lastFrameMs("ingest") - due) / 1000.0, List.of(), used,
                loadavg());
        log(String.format("FIRE ALONE: %,d timers due at one instant, last fired event %.2f s later = %,.0f timers/s (last frame in the"
                + " log %.2f s); CPU s per 10,000: %s; load %s", n, r.seconds(), r.rate(), r.logSeconds(), per10k(used, n), r.load()));
        return r;
    }

    private void report(Result r, double ingestRate, double fireRate) {
        List<Long> late = new ArrayList<>(r.lateMs());
        Collections.sort(late);
        log(String.format("%s: %,d timers, first record produced → last frame in the log %.2f s → last fired event on the audit topic"
                + " %.2f s: END TO END %,.0f timers/s", r.phase().toUpperCase(), r.timers(), r.logSeconds(), r.seconds(), r.rate()));
        log(String.format("  lateness (segment created_at − deliver_at, %,d fired): p50 %d ms, p95 %d ms, p99 %d ms, p99.9 %d ms, max %d ms",
                late.size(), pct(late, 0.50), pct(late, 0.95), pct(late, 0.99), pct(late, 0.999), late.isEmpty() ? 0 : late.get(late.size() - 1)));
        log("  CPU seconds per 10,000 timers: " + per10k(r.cpu(), r.timers()));
        Cpu c = r.cpu();
        // one timer per 100 ms: the single mode's rate and CPU per timer are the idle machine's, not figures
        if (!r.phase().equals("single")) {
            figure("end_to_end_per_s", r.rate(), "timers/s");
            figure("cpu_us_per_timer", (c.broker() + c.bridge() + c.sweeper() + c.postgres()) * 1e6 / r.timers(), "us");
            figure("cpu_us_per_timer_postgres", c.postgres() * 1e6 / r.timers(), "us");
            figure("cpu_us_per_timer_bridge", c.bridge() * 1e6 / r.timers(), "us");
            figure("cpu_us_per_timer_broker", c.broker() * 1e6 / r.timers(), "us");
            figure("cpu_us_per_timer_sweeper", c.sweeper() * 1e6 / r.timers(), "us");
            figure("p50_ms", pct(late, 0.50), "ms");
            figure("p99_ms", pct(late, 0.99), "ms");
            figure("p999_ms", pct(late, 0.999), "ms");
            figure("max_ms", pct(late, 1.0), "ms");
        }
        if (ingestRate > 0 && fireRate > 0) {
            figure("ingest_alone_per_s", ingestRate, "timers/s");
            figure("fire_alone_per_s", fireRate, "timers/s");
            double partsRate = 1 / (1 / ingestRate + 1 / fireRate);
            log(String.format("  parts in the same run: ingest alone %,.0f/s, fire alone %,.0f/s; pipeline / ingest %.2f, pipeline / fire %.2f,"
                    + " pipeline / min(parts) %.2f, pipeline / serial(parts) %.2f", ingestRate, fireRate, r.rate() / ingestRate,
                    r.rate() / fireRate, r.rate() / Math.min(ingestRate, fireRate), r.rate() / partsRate));
        }
        log("  load average at the end: " + r.load() + " (2 cores, shared)");
    }

    /** One headline number as bench/run reads it: {@code figure <label>.<name> <value> <unit>}. */
    private void figure(String name, double value, String unit) {
        System.out.printf(java.util.Locale.ROOT, "figure %s.%s %.1f %s%n", label, name, value, unit);
        System.out.flush();
    }

    private static String per10k(Cpu c, long n) {
        double f = 10_000.0 / n;
        return String.format("broker %.2f, bridge %.2f, sweeper %.2f, PostgreSQL %.2f, total %.2f (bench JVM: producer + audit reader %.2f)",
                c.broker() * f, c.bridge() * f, c.sweeper() * f, c.postgres() * f, (c.broker() + c.bridge() + c.sweeper() + c.postgres()) * f,
                c.bench() * f);
    }

    private void profile(Result r, Instant from, Instant to) throws Exception {
        for (String role : List.of("bridge", "sweeper")) {
            Path file = workDir.resolve(role + ".jfr");
            if (!Files.isRegularFile(file)) {
                log("  no JFR file for " + role);
                continue;
            }
            Map<String, Long> samples = StageProfile.samples(file, from, to);
            long total = samples.values().stream().mapToLong(Long::longValue).sum();
            double cpu = role.equals("bridge") ? r.cpu().bridge() : r.cpu().sweeper();
            log(String.format("  %s: %.2f CPU s in the phase, %d JFR samples; CPU µs per timer by stage:", role, cpu, total));
            samples.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).forEach(e -> log(String.format(
                    "    %8.1f µs/timer  %5.1f %%  %s", cpu * 1e6 / r.timers() * e.getValue() / total, 100.0 * e.getValue() / total, e.getKey())));
        }
        log(String.format("  broker: %.1f CPU µs per timer (whole process)", r.cpu().broker() * 1e6 / r.timers()));
    }

    @FunctionalInterface
    interface Render {
        TimerCommand command(int i);
    }

    /** Sends n records (at {@code rate} per second, or as fast as the producer takes them); every send is checked. */
    private void send(KafkaProducer<byte[], byte[]> producer, int n, Render render, String phase, Integer rate) {
        send(producer, COMMANDS, n, render, phase, rate);
    }

    static void send(KafkaProducer<byte[], byte[]> producer, String topic, int n, Render render, String phase, Integer rate) {
        AtomicReference<Exception> failed = new AtomicReference<>();
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            if (rate != null && i % 50 == 0) {
                long dueNanos = start + (long) (i * 1e9 / rate);
                long wait = dueNanos - System.nanoTime();
                if (wait > 0) {
                    java.util.concurrent.locks.LockSupport.parkNanos(wait);
                }
            }
            producer.send(render.command(i).envelope(topic), (m, e) -> {
                if (e != null) {
                    failed.compareAndSet(null, e);
                }
            });
        }
        producer.flush();
        if (failed.get() != null) {
            throw new IllegalStateException("producing " + phase + " failed", failed.get());
        }
    }

    private String queue(String phase, int i) {
        return phase + ".q" + (i % queues);
    }

    static String payload(int i) {
        return String.format("{\"i\":%10d,\"pad\":\"%s\"}", i, "x".repeat(170)); // 200 bytes
    }

    private long lastFrameMs(String phase) throws SQLException {
        return longOf("SELECT (extract(epoch FROM max(s.created_at)) * 1000)::bigint FROM queen.log_segments s"
                + " JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.name LIKE '" + phase + ".%'");
    }

    private void vacuum() throws SQLException {
        // autovacuum would do it in production; between phases it is done now, unmeasured, so a phase does not pay for the last
        sql("VACUUM ANALYZE queen.log_timers");
        sql("VACUUM ANALYZE queen.timer_audit_outbox");
        sql("CHECKPOINT");
    }

    private void sql(String sql) throws SQLException {
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private long longOf(String sql) throws SQLException {
        try (Connection c = pg.connect(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static long pct(List<Long> sorted, double p) {
        return sorted.isEmpty() ? 0 : sorted.get((int) Math.min(sorted.size() - 1, Math.round(p * (sorted.size() - 1))));
    }

    private static String loadavg() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    private void stopServices() {
        for (ManagedProcess p : new ManagedProcess[] {sweeper, bridge}) {
            try {
                if (p != null) {
                    p.stop(); // SIGTERM: the JVM writes its flight recording on exit
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void stop() {
        stopServices();
        try {
            if (broker != null) {
                broker.stop();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (pg != null) {
            pg.stopQuietly();
        }
        if (!opts.containsKey("keep")) {
            deleteTree(workDir.resolve("pg-data"));
            deleteTree(workDir.resolve("kafka-data"));
        }
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (var s = Files.walk(dir)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
