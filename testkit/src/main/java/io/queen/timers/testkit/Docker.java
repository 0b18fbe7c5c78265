package io.queen.timers.testkit;

import org.testcontainers.DockerClientFactory;

/** Does a Docker engine answer? Asked once per JVM (Testcontainers caches it, ~350 ms when absent). */
final class Docker {
    private static Boolean available;

    private Docker() {}

    static synchronized boolean available() {
        if (available == null) {
            boolean yes;
            try {
                yes = DockerClientFactory.instance().isDockerAvailable();
            } catch (RuntimeException | LinkageError e) {
                yes = false;
            }
            available = yes;
        }
        return available;
    }
}
