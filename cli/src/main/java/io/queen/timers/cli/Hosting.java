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
        boolean diedOnItsOwn;
        try {
            host.awaitTermination();
        } finally {
            // an interrupt asks for a stop; the stop itself (joins, pool shutdown) must not see it
            interrupted = Thread.interrupted();
            diedOnItsOwn = !interrupted && !host.closing();
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
        if (diedOnItsOwn) {
            // its error is in the log; exit non-zero so a supervisor restarts the process (safe: every
            // batch and every fire is one transaction, and a restart resumes from what was committed)
            throw new IllegalStateException(host.name() + " stopped on its own (see the log above); exiting so it can be restarted");
        }
        return 0;
    }
}
