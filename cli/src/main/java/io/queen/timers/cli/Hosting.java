package io.queen.timers.cli;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs a service host in the foreground until SIGTERM / Ctrl-C (a shutdown hook stops it gracefully). */
final class Hosting {

    private static final Logger LOG = LoggerFactory.getLogger(Hosting.class);

    private Hosting() {}

    static int runUntilStopped(ServiceHost host) {
        Thread hook = new Thread(host::close, "queen-" + host.name() + "-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        LOG.info("{} running; /health/live, /health/ready, /metrics on port {}", host.name(), host.httpPort());
        boolean interrupted = false;
        try {
            host.awaitTermination();
        } finally {
            // an interrupt asks for a stop; the stop itself (joins, pool shutdown) must not see it
            interrupted = Thread.interrupted();
            host.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running
            }
        }
        LOG.info("{} stopped", host.name());
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }
}
