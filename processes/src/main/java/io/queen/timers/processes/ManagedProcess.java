package io.queen.timers.processes;

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
 * One child process the fault harness or a benchmark started (a bridge, a sweeper, the broker), restartable with the same
 * command line. Output goes to a log file of its own; every start writes a marker line into it, so a
 * crash can be read next to the fault that preceded it.
 *
 * <p>"Planned down" marks a process the harness killed or paused on purpose; the fault harness's supervisor
 * restarts only processes that died without being planned down, and counts those exits: a service
 * that exits on its own is a finding, even when a supervisor brings it back.
 *
 * <p>{@link #withStandby}: a process whose command waits for a line on stdin before it does its work (the
 * broker's {@code --standby}). {@link #prepareStandby()} starts the next one ahead of time; {@link #start()}
 * then hands over to it with that line instead of starting a JVM on the restart's path.
 */
public final class ManagedProcess {

    private final String name;
    private final List<String> command;
    private final Map<String, String> env;
    private final Path logFile;
    private final boolean standby;
    private Process process;
    private Process next;
    private boolean plannedDown;
    private boolean retired;
    private boolean paused;
    private int starts;

    public ManagedProcess(String name, List<String> command, Map<String, String> env, Path logFile) {
        this(name, command, env, logFile, false);
    }

    /** A process whose {@code command} waits for a line on stdin to start working; see the class comment. */
    public static ManagedProcess withStandby(String name, List<String> command, Map<String, String> env, Path logFile) {
        return new ManagedProcess(name, command, env, logFile, true);
    }

    private ManagedProcess(String name, List<String> command, Map<String, String> env, Path logFile, boolean standby) {
        this.standby = standby;
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
        if (retired) {
            return;
        }
        try {
            starts++;
            Files.writeString(logFile, "=== harness: start #" + starts + " of " + name + " at " + Instant.now()
                    + (standby ? (next != null && next.isAlive() ? " (its standby takes over)" : " (no standby ready: a new one)") : "") + "\n",
                    StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            if (standby) {
                process = next != null && next.isAlive() ? next : spawn();
                next = null;
                process.getOutputStream().write("start\n".getBytes(StandardCharsets.UTF_8));
                process.getOutputStream().flush();
            } else {
                process = spawn();
            }
            plannedDown = false;
            paused = false;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name, e);
        }
    }

    /** With a standby: starts the JVM the next {@link #start()} hands over to, unless one is waiting already. */
    public synchronized void prepareStandby() {
        if (!retired && standby && (next == null || !next.isAlive())) {
            try {
                next = spawn();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start a standby of " + name, e);
            }
        }
    }

    private Process spawn() throws IOException {
        Files.createDirectories(logFile.getParent());
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        pb.environment().putAll(env);
        return pb.start();
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

    /**
     * Stops it for good (SIGTERM, 30 s, SIGKILL): a later {@link #start()} does nothing, so a fault or a
     * supervisor still at work when a run is interrupted cannot leave a process behind.
     */
    public synchronized void retire() throws InterruptedException {
        retired = true;
        stop();
    }

    /** SIGTERM and wait (30 s, then SIGKILL): the end of the run. */
    public synchronized void stop() throws InterruptedException {
        stop(30);
    }

    /** SIGTERM and wait {@code waitSeconds}, then SIGKILL; a standby not yet used is killed. */
    public synchronized void stop(int waitSeconds) throws InterruptedException {
        plannedDown = true;
        if (next != null) {
            next.destroyForcibly();
            next = null;
        }
        if (process != null && process.isAlive()) {
            if (paused) {
                signal("CONT");
            }
            process.destroy();
            if (!process.waitFor(waitSeconds, TimeUnit.SECONDS)) {
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
    public synchronized Integer unplannedExit() {
        if (process == null || plannedDown || process.isAlive()) {
            return null;
        }
        return process.exitValue();
    }

    /** The pid of the current start, for CPU accounting from /proc; -1 before the first start. */
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
