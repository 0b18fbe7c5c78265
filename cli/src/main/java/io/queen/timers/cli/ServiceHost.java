package io.queen.timers.cli;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.ops.OpsServer;
import io.queen.timers.core.ops.ReadinessCheck;
import io.queen.timers.core.ops.StandardReadiness;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;

/**
 * One service (bridge or sweeper) with its HTTP face: the service's own readiness checks plus the
 * database and Kafka checks, and its metrics, on {@code http.port}. Used by the {@code bridge} and
 * {@code sweeper} subcommands and by the local stack, so both run the same wiring.
 */
public final class ServiceHost implements AutoCloseable {

    /** What the launcher needs of a started service. */
    public record Running(List<ReadinessCheck> checks, Runnable awaitTermination, AutoCloseable stop) {}

    private final String name;
    private final Running service;
    private final StandardReadiness readiness;
    private final OpsServer ops;
    private final AtomicBoolean closed = new AtomicBoolean();

    private ServiceHost(String name, Running service, StandardReadiness readiness, OpsServer ops) {
        this.name = name;
        this.service = service;
        this.readiness = readiness;
        this.ops = ops;
    }

    public static ServiceHost start(String name, Config config, BiFunction<Config, MeterRegistry, Running> starter) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        StandardReadiness readiness = new StandardReadiness(config, "queen-" + name);
        Running service;
        try {
            service = starter.apply(config, registry);
        } catch (RuntimeException e) {
            readiness.close();
            throw e;
        }
        List<ReadinessCheck> checks = new ArrayList<>(readiness.checks());
        checks.addAll(service.checks());
        OpsServer ops;
        try {
            ops = OpsServer.start(config.intValue(CommonSettings.HTTP_PORT), registry, checks);
        } catch (RuntimeException e) {
            close(service.stop());
            readiness.close();
            throw e;
        }
        return new ServiceHost(name, service, readiness, ops);
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
