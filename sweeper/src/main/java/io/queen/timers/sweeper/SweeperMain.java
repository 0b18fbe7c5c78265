package io.queen.timers.sweeper;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.db.DataSources;
import io.queen.timers.core.config.DatabaseSettings;
import io.queen.timers.core.db.DatabaseRole;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.core.ops.SchemaStep;
import io.queen.timers.core.ops.ServiceHost;
import io.queen.timers.core.ops.ServiceKind;
import io.queen.timers.core.health.Health;
import io.queen.timers.core.health.LoopProgress;
import io.queen.timers.core.ops.KafkaVersion;
import io.queen.timers.core.ops.Startup;
import io.queen.timers.core.telemetry.Telemetry;
import io.queen.timers.log.cleanup.PartitionCleanup;
import io.queen.timers.relay.AuditRelay;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.claim.FireBudget;
import io.queen.timers.sweeper.fail.Failer;
import io.queen.timers.sweeper.fire.Firer;
import io.queen.timers.sweeper.loop.CleanupClock;
import io.queen.timers.sweeper.loop.DeadLetterClock;
import io.queen.timers.sweeper.loop.RecurringSeriesClock;
import io.queen.timers.sweeper.loop.Delivery;
import io.queen.timers.sweeper.loop.FireGate;
import io.queen.timers.sweeper.loop.Pacer;
import io.queen.timers.sweeper.loop.SweepLoop;
import io.queen.timers.sweeper.loop.SweeperMetrics;
import io.queen.timers.sweeper.loop.WakeListener;
import io.queen.timers.sweeper.loop.WakeSignal;
import io.queen.timers.sweeper.pack.Packer;
import io.queen.timers.sweeper.probe.CappedCount;
import io.queen.timers.sweeper.probe.DueProbe;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sweeper process: configuration → data source → migrations → probe, claimer, packer, firer, failer →
 * loops, LISTEN, partition cleanup, audit relay → start. {@link #main} takes {@code --config FILE};
 * {@link #start(SweeperSettings, Dependencies)} runs the same thing in-process (the CLI, tests, benchmarks) and
 * {@link #close()} stops it gracefully: each loop finishes the fire in flight (its transaction decides),
 * releases the claimed timers it has not fired yet (its own tokens only), and the relay stops last.
 */
public final class SweeperMain implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SweeperMain.class);
    /** The dead-letter gauge: counted this often (a scan of queen.log_dlq up to the cap) — a slow signal, read by people. */
    private static final Duration DEAD_LETTERS_EVERY = Duration.ofSeconds(15);
    private static final int DEAD_LETTERS_CAP = 100_000;
    /** The recurring-series gauge: the same slow cadence (one range of a partial index up to the cap). */
    private static final Duration RECURRING_SERIES_EVERY = DEAD_LETTERS_EVERY;
    private static final int RECURRING_SERIES_CAP = 1_000_000;

    private final HikariDataSource dataSource;
    private final List<SweepLoop> loops;
    private final List<Thread> threads;
    private final WakeSignal wake;
    private final WakeListener listener;
    private final Clocks clocks;
    private final AuditRelay relay;
    private final Health health;
    private final CountDownLatch closed = new CountDownLatch(1);

    /** A sweep loop and the progress its thread reports to readiness. */
    private record Worker(SweepLoop loop, LoopProgress progress) {}

    /** What runs on a slow clock beside the loops: the partition cleanup (null when off) and the two gauges' counts. */
    private record Clocks(CleanupClock cleanup, DeadLetterClock deadLetters, RecurringSeriesClock recurringSeries) {
        void close() {
            if (cleanup != null) {
                cleanup.close();
            }
            deadLetters.close();
            recurringSeries.close();
        }
    }

    private SweeperMain(HikariDataSource dataSource, List<Worker> workers, WakeSignal wake, WakeListener listener, Clocks clocks,
                        AuditRelay relay, Health health) {
        this.dataSource = dataSource;
        this.loops = workers.stream().map(Worker::loop).toList();
        this.wake = wake;
        this.listener = listener;
        this.clocks = clocks;
        this.relay = relay;
        this.health = health;
        this.threads = new ArrayList<>();
        for (int i = 0; i < workers.size(); i++) {
            Thread t = new Thread(workers.get(i).progress().guard(workers.get(i).loop()), "sweeper-loop-" + i);
            t.setUncaughtExceptionHandler((thread, error) -> loopDied(thread.getName(), error));
            threads.add(t);
        }
    }

    /** The sweeper as a stack runs it (the local command, the test stack). */
    public static final ServiceKind<SweeperMain> SERVICE = new ServiceKind<>("sweeper", DatabaseRole.SWEEPER, SweeperSettings::definition,
            (settings, deps) -> start(SweeperSettings.from(settings), deps), settings -> host(SweeperSettings.from(settings)),
            ServiceKind.NOTHING);

    public static void main(String[] args) {
        // the same wiring as the launcher's `sweeper` subcommand: readiness (database, Kafka, schema) and
        // metrics on http.port, exit 2 on a bad setting, exit 1 when the service dies on its own
        ServiceHost.main("sweeper", args, file -> SweeperSettings.from(ConfigLoader.load(SweeperSettings.definition(), file)),
                SweeperMain::host);
    }

    /** Runs the sweeper under a {@link ServiceHost} in this JVM (the launcher's `sweeper` subcommand, the local stack). */
    public static ServiceHost host(SweeperSettings settings) {
        return ServiceHost.start("sweeper", settings.common(), deps -> {
            SweeperMain sweeper = start(settings, deps);
            return new ServiceHost.Running(sweeper::awaitTermination, sweeper);
        });
    }

    /**
     * Starts the sweeper in this JVM; its loops report to the {@link Health} of {@code dependencies} (one of its own,
     * {@link #health()}, with {@link Dependencies#defaults}), its spans go to their telemetry (this JVM's unless a test
     * gives its own, docs/tracing.md#tracing); the caller owns the registry. Blocks while the database is unreachable at
     * start (the migration is retried through the startup).
     */
    public static SweeperMain start(SweeperSettings s, Dependencies dependencies) {
        Dependencies deps = dependencies.complete("sweeper", s.common(), s.telemetry());
        MeterRegistry registry = deps.registry();
        Health health = deps.health();
        Startup startup = deps.startup();
        Telemetry telemetry = deps.telemetry();
        CommonSettings common = s.common();
        s.checkFitsHeap(Runtime.getRuntime().maxMemory());
        SessionTimeouts timeouts = SessionTimeouts.of("queen-sweeper", s.loops().statementTimeout(), SweeperSettings.STATEMENT_TIMEOUT,
                s.loops().lockTimeout(), common.outages().socketTimeout());
        LOG.info("starting sweeper: {}", common);
        // its relay produces the audit events: a Kafka cluster older than the oldest supported is refused in one sentence
        if (s.audit().relayEnabled()) {
            KafkaVersion.requireAtStart(common.kafka(KafkaSettings.Client.ADMIN), "sweeper");
        }
        // least privilege: refuses a role that can write the tables directly; migrates only with db.role.check=false
        SchemaStep.atStart(common, registry, startup, "sweeper", DatabaseRole.SWEEPER);
        HikariDataSource dataSource = DataSources.create(common.database(), timeouts, registry);
        try {
            // the owner's bounds (queen.timer_settings): a setting beyond them is refused now, not at every call
            s.checkOwnerBounds(startup.retry("read the owner's bounds", () -> OwnerBounds.read(dataSource)));
            SweeperMetrics metrics = new SweeperMetrics(registry);
            WakeSignal wake = new WakeSignal();
            SweeperSettings.Claim claim = s.claim();
            SweeperSettings.Retry retry = s.retry();
            SweeperSettings.Loops loops = s.loops();
            Packer packer = new Packer(claim.maxFireBytes(), s.maxTimerBytes(Runtime.getRuntime().maxMemory()), claim.maxFireBytes());
            FireGate gate = new FireGate();
            Failer failer = new Failer(dataSource, retry.transientBackoff(), retry.backoffBase(), retry.backoffMax(), retry.maxAttempts())
                    .withMaxConsecutiveDeadLetters(retry.recurringMaxConsecutiveDeadLetters());
            // one budget per process, shared by its loops (FireBudget says why per process)
            FireBudget budget = claim.tenantFiresPerSecond() == 0 ? FireBudget.off()
                    : new FireBudget(claim.tenantFiresPerSecond(), loops.sleepNear(), System::nanoTime);
            List<Worker> workers = new ArrayList<>();
            for (int i = 0; i < loops.workers(); i++) {
                SweepLoop.Parts parts = new SweepLoop.Parts(new DueProbe(dataSource, loops.dueCap()),
                        new Claimer(dataSource, claim.batchSize(), claim.lease(), claim.perTenantPerShard(), claim.maxFireBytes(), budget),
                        new Delivery(packer, new Firer(dataSource), failer, metrics, claim.maxFireBytes(), claim.lease().dividedBy(2), telemetry),
                        new Pacer(loops.sleepMin(), loops.sleepNear(), loops.idleMax()), wake, metrics, gate);
                LoopProgress progress = health.loop("sweep-" + i);
                workers.add(new Worker(new SweepLoop(parts, claim.maxFireBytes(), claim.cycleClaimMax(), retry.maxAttempts(), progress),
                        progress));
            }
            WakeListener listener = new WakeListener(() -> connect(common.database()), wake, health.loop("wake-listener"),
                    common.retryPauseMax()).start();
            SweeperSettings.Cleanup c = s.cleanup();
            CleanupClock cleanup = c.enabled()
                    ? new CleanupClock(new PartitionCleanup(dataSource, c.idle(), c.batch()), c.interval())
                    : null;
            DeadLetterClock deadLetters = new DeadLetterClock(CappedCount.deadLetters(dataSource, DEAD_LETTERS_CAP), metrics, DEAD_LETTERS_EVERY);
            RecurringSeriesClock recurringSeries = new RecurringSeriesClock(CappedCount.recurringSeries(dataSource, RECURRING_SERIES_CAP),
                    metrics, RECURRING_SERIES_EVERY);
            AuditRelay relay = s.audit().relayEnabled()
                    ? new AuditRelay(dataSource, s.audit(), common, registry, health.loop("audit-relay")).start() : null;
            SweeperMain sweeper = new SweeperMain(dataSource, workers, wake, listener, new Clocks(cleanup, deadLetters, recurringSeries),
                    relay, health);
            sweeper.threads.forEach(Thread::start);
            return sweeper;
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
    }

    /** The LISTEN connection: its own, outside the pool, with the pool's URL and credentials and its own timeouts. */
    private static Connection connect(DatabaseSettings database) throws SQLException {
        Properties p = WakeListener.TIMEOUTS.driverProperties();
        p.setProperty("user", database.user());
        p.setProperty("password", database.password());
        return DriverManager.getConnection(database.url(), p);
    }

    /** The sweeper's readiness: its sweep workers, the wake listener and the relay ({@code /health/ready} reads it). */
    public Health health() {
        return health;
    }

    /**
     * A loop's thread ended with an Error (OutOfMemoryError, most likely; its {@link LoopProgress} already
     * says so): nothing of this process can be trusted to fire any more, so the whole sweeper stops;
     * {@link ServiceHost} then exits non-zero and a supervisor starts a fresh one (safe: every fire is one
     * transaction, and a claim not fired comes back after its lease).
     */
    private void loopDied(String loop, Throwable error) {
        LOG.error("{} died of {}; readiness is down and the sweeper stops so that it can be restarted", loop, error, error);
        try {
            Thread stopper = new Thread(this::close, "sweeper-stop");
            stopper.setDaemon(true);
            stopper.start();
        } catch (Throwable cannotEvenStartAThread) {
            closed.countDown();   // at least let the process end; the supervisor restarts it
        }
    }

    /** Blocks until {@link #close()} finished. */
    public void awaitTermination() {
        try {
            closed.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public synchronized void close() {
        if (closed.getCount() == 0) {
            return;
        }
        loops.forEach(SweepLoop::stop);
        wake.wake();
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        listener.close();
        clocks.close();
        if (relay != null) {
            relay.close();
        }
        dataSource.close();
        LOG.info("sweeper stopped");
        closed.countDown();
    }
}
