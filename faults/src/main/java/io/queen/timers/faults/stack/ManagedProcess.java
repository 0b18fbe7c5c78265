package io.queen.timers.faults.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One child process the harness started (a bridge, a sweeper, the broker), restartable with the same
 * command line. Output goes to a log file of its own; every start writes a marker line into it, so a
 * crash can be read next to the fault that preceded it.
 *
 * <p>"Planned down" marks a process the harness killed or paused on purpose; the {@link Supervisor}
 * restarts only processes that died without being planned down, and counts those exits: a service
 * that exits on its own is a finding, even when a supervisor brings it back.
 */
public final class ManagedProcess {

    private final String name;
    private final List<String> command;
    private final Map<String, String> env;
    private final Path logFile;
    private Process process;
    private boolean plannedDown;
    private boolean paused;
    private int starts;

    public ManagedProcess(String name, List<String> command, Map<String, String> env, Path logFile) {
        this.name = name;
        this.command = List.copyOf(command);
        this.env = Map.copyOf(env);
        this.logFile = logFile;
    }

    public String name() {
        return name;
    }

    public Path logFile() {
        return logFile;
    }

    public synchronized void start() {
        try {
            Files.createDirectories(logFile.getParent());
            starts++;
            Files.writeString(logFile, "=== harness: start #" + starts + " of " + name + " at " + Instant.now() + "\n",
                    StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
            pb.environment().putAll(env);
            process = pb.start();
            plannedDown = false;
            paused = false;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name, e);
        }
    }

    /** SIGKILL; the caller restarts it (planned down until then). */
    public synchronized void kill9() throws InterruptedException {
        plannedDown = true;
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        paused = false;
    }

    /** SIGTERM and wait: the end of the run. */
    public synchronized void stop() throws InterruptedException {
        plannedDown = true;
        if (process != null && process.isAlive()) {
            if (paused) {
                signal("CONT");
            }
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    public synchronized boolean pause() {
        if (process == null || !process.isAlive() || paused) {
            return false;
        }
        signal("STOP");
        paused = true;
        return true;
    }

    public synchronized void resume() {
        if (paused && process != null && process.isAlive()) {
            signal("CONT");
        }
        paused = false;
    }

    public synchronized boolean isPaused() {
        return paused;
    }

    /** Exit code of a process that died although nobody planned it, else null. */
    synchronized Integer unplannedExit() {
        if (process == null || plannedDown || process.isAlive()) {
            return null;
        }
        return process.exitValue();
    }

    /** The pid of the current start, or -1 before the first start. */
    public synchronized long pid() {
        return process == null ? -1 : process.pid();
    }

    public synchronized boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** Whether the log of the current start holds {@code text} (start-up orchestration only; checks never read logs). */
    public boolean startedLogContains(String text) {
        try {
            String all = Files.readString(logFile, StandardCharsets.UTF_8);
            int from = all.lastIndexOf("=== harness: start #");
            return all.indexOf(text, Math.max(0, from)) >= 0;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    public synchronized String tail(int lines) {
        try {
            List<String> all = Files.readAllLines(logFile, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | RuntimeException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    private void signal(String sig) {
        try {
            Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).inheritIO().start();
            k.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
