package io.queen.timers.core.ops;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.health.Health;
import io.queen.timers.core.logging.LogFormat;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One service (bridge or sweeper) with its HTTP face: the service's loops ({@link Health}) plus the
 * cached database and Kafka checks, and its metrics, on {@code http.bind.address}:{@code http.port}.
 * The HTTP face comes up first, so a service that waits at start for PostgreSQL ({@link Startup}) is
 * live and says why it is not ready yet. The one way a service runs: the
 * launcher's {@code bridge} and {@code sweeper} subcommands, the local stack, and the modules' own
 * {@code main} methods ({@link #main}) all go through it.
 */
public final class ServiceHost implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ServiceHost.class);

    /** What the launcher needs of a started service (its loops report to the {@link Health} it was given). */
    public record Running(Runnable awaitTermination, AutoCloseable stop) {}

    /**
     * Starts a service with the host's registry, {@link Health} and {@link Startup} (its telemetry left to the service):
     * blocks while {@link Startup#retry} waits for its dependencies. The service's own settings are the starter's.
     */
    @FunctionalInterface
    public interface Starter {
        Running start(Dependencies dependencies);
    }

    private final String name;
    private final Running service;
    private final Health health;
    private final StandardReadiness readiness;
    private final OpsServer ops;
    private final JvmGcMetrics gc;
    private final AtomicBoolean closed = new AtomicBoolean();

    private ServiceHost(String name, Running service, Health health, StandardReadiness readiness, OpsServer ops, JvmGcMetrics gc) {
        this.name = name;
        this.gc = gc;
        this.service = service;
        this.health = health;
        this.readiness = readiness;
        this.ops = ops;
    }

    public static ServiceHost start(String name, CommonSettings config, Starter starter) {
        return start(name, config, starter, ops -> {});
    }

    /**
     * As {@link #start(String, CommonSettings, Starter)}; {@code listening} is told the HTTP port as soon as it
     * answers, before the service itself has started (tests, and the launcher's banner).
     */
    public static ServiceHost start(String name, CommonSettings config, Starter starter, java.util.function.IntConsumer listening) {
        // first: every line of the service is in the format the platform reads
        LogFormat.apply(config.ops().logFormat());
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        JvmGcMetrics gc = bindJvm(registry);
        // this host's wall clock, for local durations and the times readiness shows (start-up's timeout, a loop's last cycle):
        // nothing it measures is compared with a time from the database, whose clock alone decides due-ness
        Clock clock = Clock.systemUTC();
        Health health = Health.from(config.health());
        Startup startup = new Startup(name, config.outages().startupTimeout(), config.retryPauseMax(), clock);
        health.add(startup);
        StandardReadiness readiness = new StandardReadiness(config, "queen-" + name, clock, registry);
        readiness.registerWith(health);
        health.exportTo(registry);
        OpsServer ops;
        try {
            ops = OpsServer.start(config.ops().httpBindAddress(), config.ops().httpPort(), registry, health);
        } catch (RuntimeException e) {
            readiness.close();
            gc.close();
            throw e;
        }
        listening.accept(ops.port());
        Running service;
        try {
            service = starter.start(new Dependencies(registry, health, startup, null));
        } catch (RuntimeException e) {
            ops.close();
            readiness.close();
            gc.close();
            throw e;
        }
        startup.done();
        return new ServiceHost(name, service, health, readiness, ops, gc);
    }

    /**
     * The JVM's own meters every dashboard expects (jvm_memory_*, jvm_gc_*, jvm_threads_*, jvm_classes_*,
     * process_cpu_*, system_cpu_*, process_uptime_seconds); returns the GC binder, which holds a listener until closed.
     */
    static JvmGcMetrics bindJvm(MeterRegistry registry) {
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        return gc;
    }

    public Health health() {
        return health;
    }

    public int httpPort() {
        return ops.port();
    }

    public String name() {
        return name;
    }

    /** True once {@link #close()} was called: a service that ends before this died on its own. */
    public boolean closing() {
        return closed.get();
    }

    /** Blocks until the service stops (after {@link #close()} or a fatal error). */
    public void awaitTermination() {
        service.awaitTermination().run();
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            ops.close();
            close(service.stop());
            readiness.close();
            gc.close();
        }
    }

    /**
     * Runs this host in the foreground until SIGTERM / Ctrl-C (a shutdown hook stops it gracefully).
     *
     * @throws IllegalStateException when the service stopped on its own (its error is in the log)
     */
    public int runUntilStopped() {
        Thread hook = new Thread(this::close, "queen-" + name + "-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        LOG.info("{} running; /health/live, /health/ready, /metrics on port {}", name, httpPort());
        boolean interrupted;
        boolean diedOnItsOwn;
        try {
            awaitTermination();
        } finally {
            // an interrupt asks for a stop; the stop itself (joins, pool shutdown) must not see it
            interrupted = Thread.interrupted();
            diedOnItsOwn = !interrupted && !closing();
            close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running
            }
        }
        LOG.info("{} stopped", name);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (diedOnItsOwn) {
            // exit non-zero so a supervisor restarts the process (safe: every batch and every fire is one
            // transaction, and a restart resumes from what was committed)
            throw new IllegalStateException(name + " stopped on its own (see the log above); exiting so it can be restarted");
        }
        return 0;
    }

    /**
     * A module's {@code main}: {@code [--config FILE]}, the environment on top, read into the service's settings by
     * {@code load} (its {@code *Settings.from}), then {@code host} and {@link #runUntilStopped}. A bad argument or
     * setting is one line and exit 2; a service that dies on its own exits 1.
     */
    public static <S> void main(String name, String[] args, java.util.function.Function<Path, S> load,
            java.util.function.Function<S, ServiceHost> host) {
        Path file = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--config") && i + 1 < args.length) {
                file = Path.of(args[++i]);
            } else {
                System.err.println("usage: " + name + " [--config FILE]   (unknown argument: " + args[i] + ")");
                System.exit(2);
            }
        }
        S settings;
        try {
            settings = load.apply(file);
        } catch (ConfigException e) {
            System.err.println("queen-timers " + name + ": " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            host.apply(settings).runUntilStopped();
        } catch (RuntimeException e) {
            System.err.println("queen-timers " + name + ": " + e.getMessage());
            System.exit(1);
        }
    }

    private static void close(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            throw new IllegalStateException("stopping failed: " + e.getMessage(), e);
        }
    }
}
