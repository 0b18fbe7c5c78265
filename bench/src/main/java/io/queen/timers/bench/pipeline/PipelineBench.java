package io.queen.timers.bench.pipeline;

import io.queen.timers.bench.BenchPostgres;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.processes.Launcher;
import io.queen.timers.processes.ManagedProcess;
import io.queen.timers.processes.PostgresProcess;
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
import org.apache.kafka.clients.producer.ProducerRecord;
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
 * </pre>
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
    private static final int QUEUES = 100;
    private static final String GROUP = "queen-timers-bridge";

    private final Map<String, String> opts;
    private final Path workDir;
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
        boolean jfr = opts.containsKey("jfr");
        int count = Integer.parseInt(opts.getOrDefault("count", mode.equals("single") ? "300" : "200000"));
        int rate = Integer.parseInt(opts.getOrDefault("rate", "5000"));
        int seconds = Integer.parseInt(opts.getOrDefault("seconds", "60"));
        int partsCount = Integer.parseInt(opts.getOrDefault("parts-count", mode.equals("burst") ? Integer.toString(count) : "100000"));
        boolean cold = opts.containsKey("cold");
        boolean parts = !opts.containsKey("no-parts") && !cold;
        int pending = Integer.parseInt(opts.getOrDefault("pending", "0"));
        label = opts.getOrDefault("label", (cold ? "cold" : mode) + (mode.equals("steady") ? Integer.toString(rate) : ""));
        Launcher launcher = new Launcher(Path.of(opts.getOrDefault("launcher", "local/target/queen-timers.jar")));

        deleteTree(workDir);
        Files.createDirectories(workDir.resolve("logs"));
        log("PipelineBench " + mode + (mode.equals("burst") ? " " + count + " timers"
                        : mode.equals("single") ? " " + count + " timers, one at a time"
                        : mode.equals("flood") ? " " + count + " back-dated timers of one tenant, " + opts.getOrDefault("quiet", "100")
                                + " due 2 s after they are sent of another" : " " + rate + "/s for " + seconds + " s")
                + "; ingest/fire alone on " + (parts ? partsCount : 0) + "; work dir " + workDir + "; load " + loadavg());
        pg = new PostgresProcess(workDir, Launcher.freePort(), BenchPostgres.durability(), BenchPostgres.settings());
        pg.bootstrap();
        log("PostgreSQL: " + BenchPostgres.label(pg));
        int kafkaPort = Launcher.freePort();
        bootstrap = "127.0.0.1:" + kafkaPort;
        List<String> jvm = new ArrayList<>(List.of("-Xmx512m"));
        broker = launcher.broker(workDir.resolve("kafka-data"), kafkaPort, jvm, workDir.resolve("logs/broker.log"));
        broker.start();
        Launcher.awaitPort(kafkaPort, 120_000);
        launcher.runOnce(List.of("migrate", "--jdbc-url", pg.jdbcUrl(), "--jdbc-user", "postgres"), workDir.resolve("logs/migrate.log"));
        sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(COMMANDS, 4, (short) 1), new NewTopic(AUDIT, 4, (short) 1),
                    new NewTopic(COMMANDS_QUIET, 1, (short) 1), new NewTopic(AUDIT + "." + QUIET_TENANT, 1, (short) 1))).all().get();
        }
        List<String> serviceJvm = new ArrayList<>(jvm);
        if (jfr) {
            serviceJvm.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename=" + workDir.resolve("ROLE.jfr"));
        }
        bridge = launcher.service("bridge", "bridge", settings(true), workDir.resolve("bridge.properties"),
                withRole(serviceJvm, "bridge"), workDir.resolve("logs/bridge.log"));
        sweeper = launcher.service("sweeper", "sweeper", settings(false), workDir.resolve("sweeper.properties"),
                withRole(serviceJvm, "sweeper"), workDir.resolve("logs/sweeper.log"));
        bridge.start();
        sweeper.start();
        for (ManagedProcess p : List.of(bridge, sweeper)) {
            if (!Launcher.awaitRunning(p, 180_000)) {
                throw new IllegalStateException(p.name() + " did not start (see " + p.logFile() + ")");
            }
        }
        log("broker, bridge, sweeper running as separate processes (pids " + broker.pid() + ", " + bridge.pid() + ", "
                + sweeper.pid() + "); PostgreSQL postmaster " + pg.postmasterPid());

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
                sql("SELECT pg_stat_statements_reset()");
                Result ingest = ingestAlone(producer, audit, partsCount);
                ingestRate = ingest.rate();
                statements(ingest.timers());
                vacuum();
                Result fire = fireAlone(audit, partsCount);
                fireRate = fire.rate();
                vacuum();
            }
            sql("SELECT pg_stat_statements_reset()");
            Instant from = Instant.now();
            Result main = switch (mode) {
                case "burst" -> burst(producer, audit, "burst", count);
                case "flood" -> flood(producer, audit, quietAudit, count, Integer.parseInt(opts.getOrDefault("quiet", "100")));
                case "single" -> single(audit, count);
                default -> steady(producer, audit, quietAudit, rate, seconds);
            };
            Instant to = Instant.now();
            report(main, ingestRate, fireRate);
            statements(main.timers());
            if (jfr) {
                stopServices();
                profile(main, from, to);
            }
        }
    }

    private static List<String> withRole(List<String> jvm, String role) {
        return jvm.stream().map(s -> s.replace("ROLE", role)).toList();
    }

    private Properties settings(boolean isBridge) {
        Properties p = new Properties();
        p.put("jdbc.url", pg.jdbcUrl());
        p.put("jdbc.user", "postgres");
        p.put("db.role.check", "false"); // connects as the superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        p.put("kafka.bootstrap.servers", bootstrap);
        p.put("http.port", "0");
        p.put("audit.topic", AUDIT);
        if (isBridge) {
            p.put("command.topics", COMMANDS + "," + COMMANDS_QUIET);
            p.put("command.topic.tenants", COMMANDS_QUIET + "=" + QUIET_TENANT); // the flood (and every other mode) is the default tenant's
            p.put("bridge.default.tenant.allowed", "true");
            p.put("bridge.start.position", "earliest"); // the bench's own topic: what it sends before the group's first join is applied
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
     * R per second for T seconds, each due 1-10 s after it is produced. With {@code --backlog N}, another tenant sends
     * N timers due at once {@code --backlog-at} seconds in, on its own command topic, as fast as the producer takes them.
     */
    private Result steady(KafkaProducer<byte[], byte[]> producer, AuditWatch audit, AuditWatch quietAudit, int rate, int seconds)
            throws Exception {
        int backlog = Integer.parseInt(opts.getOrDefault("backlog", "0"));
        long backlogAtMs = Long.parseLong(opts.getOrDefault("backlog-at", Integer.toString(seconds / 3))) * 1000;
        Cpu c0 = cpu();
        int n = rate * seconds;
        Random random = new Random(42);
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
        send(producer, COMMANDS, n, i -> TimerCommand.schedule(queue("steady", i), "k" + i).delay(Duration.ofMillis(1_000 + random.nextInt(9_001)))
                .txn("txn-steady-" + i).payload(payload(i)), "steady", rate);
        long sentMs = System.currentTimeMillis();
        AuditWatch.Phase ph = audit.phase("steady");
        audit.await("fired", ph.fired, n, Duration.ofMinutes(20));
        Cpu used = cpu().minus(c0);
        log(String.format("steady: %,d produced in %.1f s (%,.0f/s); the last fired event %.1f s after the last was produced (the last is due"
                + " 1-10 s after it is produced)", n, (sentMs - start) / 1000.0, n * 1000.0 / (sentMs - start), (ph.lastFiredMs - sentMs) / 1000.0));
        figure("produced_per_s", n * 1000.0 / (sentMs - start), "timers/s");
        figure("last_fired_after_last_sent_s", (ph.lastFiredMs - sentMs) / 1000.0, "s");
        if (backlog > 0) {
            backlogProducer.join();
            if (backlogFailed.get() != null) {
                throw new IllegalStateException("producing the backlog failed", backlogFailed.get());
            }
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
        return new Result("steady", n, (ph.lastFiredMs - start) / 1000.0, (lastFrameMs("steady") - start) / 1000.0,
                new ArrayList<>(ph.lateMs), used, loadavg());
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
                + " SELECT '" + PENDING_TENANT + "', 'pending.q' || (g % " + QUEUES + "), 'k' || g,"
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

    /** PostgreSQL's time by top-level statement during the measured phase (pg_stat_statements, execution time, wall clock). */
    private void statements(long timers) throws SQLException {
        try (Connection c = pg.connect(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT calls, rows, total_exec_time, total_plan_time, regexp_replace(left(query, 90), '\\s+', ' ', 'g')"
                        + " FROM pg_stat_statements WHERE toplevel ORDER BY total_exec_time DESC LIMIT 12")) {
            log("  PostgreSQL statements (top level, by execution time; µs per timer of this phase):");
            while (rs.next()) {
                log(String.format("    %8.1f µs/timer  %8d calls  %9d rows  %9.0f ms  %s", (rs.getDouble(3) + rs.getDouble(4)) * 1000 / timers,
                        rs.getLong(1), rs.getLong(2), rs.getDouble(3), rs.getString(5)));
            }
        }
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

    private void send(KafkaProducer<byte[], byte[]> producer, String topic, int n, Render render, String phase, Integer rate) {
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

    private static String queue(String phase, int i) {
        return phase + ".q" + (i % QUEUES);
    }

    private static String payload(int i) {
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
