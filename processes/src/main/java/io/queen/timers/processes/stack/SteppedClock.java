package io.queen.timers.processes.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A service's wall clock, stepped for real: the process runs with Debian's libfaketime preloaded ({@code LD_PRELOAD}), which
 * answers every {@code clock_gettime(CLOCK_REALTIME)}, {@code gettimeofday} and {@code time} call of the process (the JVM's
 * {@code System.currentTimeMillis} and {@code Instant.now} among them) with the real time plus the offset written in a file
 * of the run, read again at most every second. The monotonic clock is left alone ({@code FAKETIME_DONT_FAKE_MONOTONIC}):
 * the JVM's timed waits and {@code System.nanoTime} run on it, and a monotonic clock never steps on a real machine either.
 *
 * <p>A step is an atomic rename of that file (a reader never sees it half written: a truncated file read as "+0" turned a
 * +30 s step into a -30 s one in a trial). {@link #probe} reads the time through the same library, file and variables in a
 * process of its own ({@code date}), so the harness knows the step took.
 *
 * <p>PRICE: a {@code stat} of the file at most once a second per process, and libfaketime's own cost on every clock read.
 */
public final class SteppedClock {

    /** Where Debian's libfaketime package puts the multi-threaded library. */
    public static final Path LIBRARY = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1");

    private final Path offsetFile;

    public SteppedClock(Path offsetFile) {
        if (!Files.isRegularFile(LIBRARY)) {
            throw new IllegalStateException("a clock step needs libfaketime (" + LIBRARY + " not found): apt-get install -y libfaketime");
        }
        this.offsetFile = offsetFile;
        step(0);
    }

    /** The environment a process runs with so that its wall clock is this one. */
    public Map<String, String> environment() {
        return Map.of("LD_PRELOAD", LIBRARY.toString(), "FAKETIME_TIMESTAMP_FILE", offsetFile.toString(),
                "FAKETIME_CACHE_DURATION", "1", "FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }

    /** From now on (within a second) the process's wall clock reads the real time plus {@code offsetMs} (whole seconds). */
    public void step(long offsetMs) {
        try {
            Path tmp = offsetFile.resolveSibling(offsetFile.getFileName() + ".tmp");
            // libfaketime's relative form, in whole seconds: "+30s", "-30s"
            Files.writeString(tmp, (offsetMs >= 0 ? "+" : "-") + Math.abs(offsetMs) / 1000 + "s\n", StandardCharsets.UTF_8);
            Files.move(tmp, offsetFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot step the clock in " + offsetFile, e);
        }
    }

    /** The wall clock a process with {@link #environment()} reads now minus the real one, in ms (a {@code date} of its own). */
    public long probe() throws InterruptedException {
        try {
            ProcessBuilder pb = new ProcessBuilder("date", "+%s%3N").redirectErrorStream(true);
            pb.environment().putAll(environment());
            long before = System.currentTimeMillis();
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("date under libfaketime failed: " + out);
            }
            long after = System.currentTimeMillis();
            return Long.parseLong(out) - (before + after) / 2;
        } catch (IOException | NumberFormatException e) {
            throw new IllegalStateException("cannot read the stepped clock: " + e, e);
        }
    }
}
