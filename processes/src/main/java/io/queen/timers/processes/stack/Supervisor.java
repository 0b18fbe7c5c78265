package io.queen.timers.processes.stack;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import io.queen.timers.processes.ManagedProcess;

/**
 * Brings back a process that died although the harness did not kill it, the way systemd or Kubernetes
 * would (after a pause of one second), and records each such exit with the end of its log: a service
 * that stops on its own while its database or broker is down is a defect this harness reports, not one
 * it hides.
 */
public final class Supervisor implements AutoCloseable {

    public record Exit(String process, int code, Instant at, String logTail) {
    }

    private final List<ManagedProcess> processes;
    private final List<Exit> exits = new ArrayList<>();
    private final Consumer<String> log;
    private final Thread thread;
    private volatile boolean running = true;

    public Supervisor(List<ManagedProcess> processes, Consumer<String> log) {
        this.processes = List.copyOf(processes);
        this.log = log;
        this.thread = new Thread(this::watch, "supervisor");
        this.thread.setDaemon(true);
    }

    public Supervisor start() {
        thread.start();
        return this;
    }

    public synchronized List<Exit> exits() {
        return List.copyOf(exits);
    }

    private void watch() {
        while (running) {
            for (ManagedProcess p : processes) {
                Integer code = p.unplannedExit();
                if (code != null && running) {
                    Exit exit = new Exit(p.name(), code, Instant.now(), p.tail(12));
                    synchronized (this) {
                        exits.add(exit);
                    }
                    log.accept("supervisor: " + p.name() + " exited on its own with code " + code + "; restarting it in 1 s");
                    sleep(Duration.ofSeconds(1));
                    if (running && p.unplannedExit() != null) {
                        p.start();
                    }
                }
            }
            sleep(Duration.ofMillis(250));
        }
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
    }
}
