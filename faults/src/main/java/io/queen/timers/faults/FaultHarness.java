package io.queen.timers.faults;

import io.queen.timers.faults.check.AuditWatch;
import io.queen.timers.faults.check.LogWatch;
import io.queen.timers.faults.check.Checker;
import io.queen.timers.faults.check.FaultTimeline;
import io.queen.timers.faults.check.Findings;
import io.queen.timers.faults.check.TopicReader;
import io.queen.timers.faults.inject.FaultInjector;
import io.queen.timers.faults.inject.FaultKind;
import io.queen.timers.faults.inject.Outage;
import io.queen.timers.faults.load.CommandGenerator;
import io.queen.timers.testkit.Poison;
import io.queen.timers.faults.load.Producing;
import io.queen.timers.processes.stack.Stack;
import io.queen.timers.processes.stack.Supervisor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;

/**
 * The seeded fault harness (docs/fault-harness.md): starts the stack as separate processes, produces
 * the seeded commands while injecting the seeded faults, lets everything settle, checks from the
 * outside, prints the table and exits 1 on any violation (2 on a harness error).
 */
public final class FaultHarness {

    static final String NEVER_BIT = "fault kinds that never bit";
    static final String FEWER_THAN_PLANNED = "fault kinds effective fewer times than planned";

    /**
     * Each kind's faults against its plan, counted on bites (docs/fault-harness.md "Faults that count"): a kind planned and
     * never effective fails every run, strict or not (it tested nothing); one short of its plan fails a strict run.
     */
    static void judgeFaults(Findings findings, Map<FaultKind, Integer> plan, ToIntFunction<FaultKind> effective,
                            Function<FaultKind, String> attempts, boolean strict, Consumer<String> log) {
        findings.declare(FEWER_THAN_PLANNED + (strict ? "" : " (reported, not failing: --strict-faults)"));
        findings.declare(NEVER_BIT);
        for (FaultKind k : FaultKind.values()) {
            int planned = plan.getOrDefault(k, 0);
            String what = k.flag() + ": " + effective.applyAsInt(k) + " of " + planned + " effective (" + attempts.apply(k) + ")";
            if (planned > 0 && effective.applyAsInt(k) == 0) {
                findings.violation(NEVER_BIT, what);
            }
            if (effective.applyAsInt(k) < planned) {
                if (strict) {
                    findings.violation(FEWER_THAN_PLANNED, what);
                } else {
                    log.accept("fewer faults than planned: " + what);
                }
            }
        }
    }

    private final HarnessOptions o;
    private final long t0 = System.currentTimeMillis();

    private FaultHarness(HarnessOptions o) {
        this.o = o;
    }

    public static void main(String[] args) {
        // The harness's own clients warn on every reconnect during the faults it makes: noise, not news.
        ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("org.apache.kafka")).setLevel(ch.qos.logback.classic.Level.ERROR);
        HarnessOptions o;
        try {
            o = HarnessOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        int code;
        try {
            code = new FaultHarness(o).run();
        } catch (Exception e) {
            e.printStackTrace();
            System.err.println("fault harness: harness error (seed " + o.seed() + "): " + e);
            code = 2;
        }
        System.exit(code);
    }

    private void log(String line) {
        System.out.printf("[%7.1f s] %s%n", (System.currentTimeMillis() - t0) / 1000.0, line);
        System.out.flush();
    }

    private int run() throws Exception {
        log("fault harness: seed " + o.seed() + " (replay with --seed " + o.seed() + "), " + o.commands() + " commands over "
                + o.keys() + " keys x " + CommandGenerator.QUEUES + " queues x 2 tenants in " + o.produceMs() / 1000 + " s, faults "
                + o.faults() + " in " + o.faultWindowMs() / 1000 + " s, hostile " + o.hostileFraction() + ", poisoned "
                + o.poisonFraction() + ", large " + o.largeFraction() + ", recurring " + o.recurringFraction() + "; PostgreSQL "
                + (o.durable() ? "durable (fsync on)" : "fsync off") + "; work dir " + o.workDir());
        if (!Files.isRegularFile(o.launcherJar())) {
            throw new IllegalStateException("launcher jar " + o.launcherJar() + " not found: build it first (docs/fault-harness.md)");
        }
        deleteTree(o.workDir());
        Files.createDirectories(o.workDir().resolve("logs"));
        Stack stack = new Stack(o.workDir().toAbsolutePath(), o.launcherJar().toAbsolutePath(), o.durable(), this::log);
        boolean clean = false;
        // Ctrl-C or SIGTERM must not leave seven processes behind.
        Thread stopper = new Thread(stack::close, "stop-stack");
        AuditWatch watch = null;
        LogWatch logWatch = null;
        Runtime.getRuntime().addShutdownHook(stopper);
        try {
            stack.startInfrastructure();
            createTopics(stack.bootstrap());
            // The harness's own clock on the audit topics, for the lateness bound (docs/fault-harness.md "Lateness").
            watch = AuditWatch.start(stack.bootstrap(), List.of(Stack.AUDIT, Stack.AUDIT_B));
            try (Connection c = stack.postgres().connect()) {
                Poison.install(c);
            }
            if (o.faults().getOrDefault(FaultKind.CLOCK_STEP, 0) > 0) {
                // the last sweeper's wall clock is the one stepped (libfaketime; docs/fault-harness.md "The faults")
                stack.withSteppedClock("sweeper-" + o.sweepers());
            }
            stack.startServices(o.bridges(), o.sweepers());
            stack.awaitServicesRunning(300_000);
            // The harness's own clock on the log: when each fire was first seen committed (docs/fault-harness.md "Lateness").
            logWatch = LogWatch.start(stack.postgres());
            log("services: " + o.bridges() + " bridges, " + o.sweepers() + " sweepers started from " + o.launcherJar()
                    + " (a supervisor restarts any that exits on its own, and counts it)");

            CommandGenerator generator = new CommandGenerator(o.seed(), o.keys(), o.hostileFraction(), o.poisonFraction(), o.largeFraction(),
                    o.recurringFraction());
            Producing producing = new Producing(generator, stack.postgres(), stack.bootstrap(), o.commands(), this::log);
            FaultInjector injector = new FaultInjector(stack, o.seed(), o.faults(), this::log);
            AtomicReference<Exception> producerError = new AtomicReference<>();
            Thread producer = new Thread(() -> {
                try {
                    producing.run(o.produceMs());
                } catch (Exception e) {
                    producerError.set(e);
                }
            }, "producer");
            long loadStart = System.currentTimeMillis();
            producer.start();
            injector.run(o.faultWindowMs());
            List<Outage> outages = injector.outages();
            // The load goes on through the faults, their recovery budget and a fault-free tail: the fault-free bounds judge
            // fires on every run (docs/fault-harness.md "Lateness"). Without faults, the planned commands are all.
            long faultsEnded = outages.stream().mapToLong(Outage::endMs).max().orElse(Long.MIN_VALUE);
            if (faultsEnded == Long.MIN_VALUE) {
                producing.stopAt(0);
            } else {
                long tailFrom = faultsEnded + FaultTimeline.RECOVERY_MS;
                producing.stopAt(tailFrom + o.tailMs());
                log("faults done (the last ended at " + (faultsEnded - t0) / 1000 + " s); the load goes on through their recovery budget ("
                        + FaultTimeline.RECOVERY_MS / 1000 + " s) and a fault-free tail of " + o.tailMs() / 1000 + " s");
            }
            producer.join();
            if (producerError.get() != null) {
                throw producerError.get();
            }
            log("load and faults done in " + (System.currentTimeMillis() - loadStart) / 1000 + " s; settling");
            boolean settled = settle(stack);
            List<Supervisor.Exit> exits = stack.supervisor().exits();
            for (var p : stack.services()) {
                p.stop();
            }
            log(settled ? "settled; services stopped; checking" : "did NOT settle within " + o.settleTimeoutMs() / 1000 + " s; checking what there is");

            Findings findings = new Checker(stack.bootstrap(), stack.postgres(), producing.intents(), producing.failedSeqs(),
                    Checker.HARNESS_TOO_LATE_SLACK_MS).observed(watch.stop(java.time.Duration.ofSeconds(120)), logWatch.stop(), logWatch.stagedSeen(),
                            FaultTimeline.of(outages, FaultTimeline.RECOVERY_MS), o.minFaultFreeFires())
                    .check();
            findings.fact("log watch polls that failed (PostgreSQL away)", logWatch.failedPolls());
            findings.fact("commands acknowledged by the broker", producing.acknowledged());
            findings.declare("unplanned service exits" + (o.strictExits() ? "" : " (reported, not failing: --strict-exits)"));
            if (o.strictExits()) {
                exits.forEach(e -> findings.violation("unplanned service exits", e.process() + " exit " + e.code() + " at " + e.at()));
            } else {
                findings.fact("unplanned service exits (restarted by the supervisor)", exits.size());
            }
            judgeFaults(findings, o.faults(), injector::effective, k -> injector.done(k) + " attempted, " + injector.skipped(k)
                    + " skipped, " + injector.failed(k) + " failed", o.strictFaults(), this::log);
            findings.fact("bridge pauses whose next batch was fenced by the stored offsets", injector.fencedAfterPause());
            // a kill is a fault only as long as the process comes back: one still not working at its deadline is lost
            // capacity nobody would notice in the oracle's verdicts
            findings.declare("killed processes not working again within " + FaultInjector.BACK_WITHIN_MS / 1000 + " s");
            injector.notBack().forEach(w -> findings.violation("killed processes not working again within "
                    + FaultInjector.BACK_WITHIN_MS / 1000 + " s", w));
            clean = findings.clean() && settled;
            print(findings, injector, exits, settled);
            return clean ? 0 : 1;
        } finally {
            if (watch != null) {
                watch.close();
            }
            if (logWatch != null) {
                logWatch.close();
            }
            stack.close();
            try {
                Runtime.getRuntime().removeShutdownHook(stopper);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running already; it found the stack closed
            }
            if (clean && !o.keep()) {
                deleteTree(o.workDir());
            } else {
                log("kept " + o.workDir() + " (logs/ holds every process's log)");
            }
        }
    }

    private void createTopics(String bootstrap) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            admin.createTopics(List.of(
                    new NewTopic(Stack.COMMANDS_A, 6, (short) 1),
                    new NewTopic(Stack.COMMANDS_B, 6, (short) 1),
                    new NewTopic(Stack.AUDIT, 3, (short) 1),
                    new NewTopic(Stack.AUDIT_B, 3, (short) 1))).all().get();
        }
    }

    /**
     * Waits until every command record is applied (the bridges' stored offsets reach the topics' ends),
     * nothing is staged and the audit outbox is empty — all read from outside the services.
     */
    private boolean settle(Stack stack) throws InterruptedException {
        long deadline = System.currentTimeMillis() + o.settleTimeoutMs();
        long lastLog = 0;
        while (System.currentTimeMillis() < deadline) {
            String state;
            try {
                Map<TopicPartition, Long> ends = TopicReader.endOffsets(stack.bootstrap(), List.of(Stack.COMMANDS_A, Stack.COMMANDS_B));
                long behind = 0;
                long staged;
                long outbox;
                try (Connection c = stack.postgres().connect(); Statement s = c.createStatement()) {
                    Map<String, Long> stored = new HashMap<>();
                    try (ResultSet rs = s.executeQuery("SELECT topic, \"partition\", next_offset FROM queen.bridge_offsets")) {
                        while (rs.next()) {
                            stored.put(rs.getString(1) + "/" + rs.getInt(2), rs.getLong(3));
                        }
                    }
                    for (var e : ends.entrySet()) {
                        behind += Math.max(0, e.getValue() - stored.getOrDefault(e.getKey().topic() + "/" + e.getKey().partition(), 0L));
                    }
                    staged = count(s, "SELECT count(*) FROM queen.log_timers");
                    outbox = count(s, "SELECT count(*) FROM queen.timer_audit_outbox");
                }
                if (behind == 0 && staged == 0 && outbox == 0) {
                    return true;
                }
                state = "records not applied " + behind + ", staged " + staged + ", outbox " + outbox;
            } catch (Exception e) {
                state = "cannot read yet: " + e;
            }
            if (System.currentTimeMillis() - lastLog > 10_000) {
                log("settling: " + state);
                lastLog = System.currentTimeMillis();
            }
            Thread.sleep(1000);
        }
        return false;
    }

    private static long count(Statement s, String sql) throws Exception {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private void print(Findings f, FaultInjector injector, List<Supervisor.Exit> exits, boolean settled) {
        StringBuilder b = new StringBuilder();
        b.append("\n==== fault harness: seed ").append(o.seed()).append(", ").append(Instant.now()).append(" ====\n");
        row(b, "commands planned (--commands)", o.commands());
        f.facts().forEach((k, v) -> row(b, k, v));
        b.append("---- faults (effective / planned; attempted: carried out, whether or not they bit)\n");
        int total = 0;
        int attempted = 0;
        for (FaultKind k : FaultKind.values()) {
            int planned = o.faults().getOrDefault(k, 0);
            total += injector.effective(k);
            attempted += injector.done(k);
            row(b, "  " + k.flag(), injector.effective(k) + " / " + planned + ", attempted " + injector.done(k)
                    + (injector.failed(k) > 0 ? ", " + injector.failed(k) + " failed" : "")
                    + (injector.skipped(k) > 0 ? ", " + injector.skipped(k) + " skipped (no time left)" : ""));
        }
        row(b, "  total", total + " effective, " + attempted + " attempted");
        b.append("---- violations\n");
        f.violations().forEach((k, v) -> row(b, (v > 0 ? "! " : "  ") + k, v));
        row(b, (settled ? "  " : "! ") + "settled (applied, nothing staged, outbox empty)", settled ? "yes" : "NO");
        row(b, "wall time s", (System.currentTimeMillis() - t0) / 1000);
        b.append(f.clean() && settled ? "RESULT: PASS\n" : "RESULT: FAIL\n");
        f.examples().forEach((k, ex) -> {
            b.append("examples of '").append(k).append("':\n");
            ex.forEach(e -> b.append("    ").append(e.length() > 600 ? e.substring(0, 600) + "..." : e).append('\n'));
        });
        for (Supervisor.Exit e : exits) {
            b.append("unplanned exit: ").append(e.process()).append(" code ").append(e.code()).append(" at ").append(e.at())
                    .append(", end of its log:\n").append(e.logTail().indent(4));
        }
        System.out.println(b);
    }

    private static void row(StringBuilder b, String name, Object value) {
        b.append(String.format("%-62s %s%n", name, value));
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
