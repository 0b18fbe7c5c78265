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
 * <p>PRICE: a read of the file about once a second per process (a step is seen 1-2 s after the rename), and
 * libfaketime's own cost on every wall-clock read (0.13 µs instead of 0.04 µs; {@link #LIBRARY}).
 */
public final class SteppedClock {

    /**
     * Where Debian's libfaketime package puts the library. Not its thread-safe variant, libfaketimeMT: measured
     * (2026-12-06, this 2-core machine, JDK 17, the variables of {@link #environment()}) 5,000,000
     * {@code System.currentTimeMillis} calls took 0.22 s plain, 0.67 s under libfaketime and 17 s under libfaketimeMT.
     * The plain variant's shared state is a cached offset re-read from the file about once a second: four threads reading
     * the clock through a step saw no jump but the step's own (at most 48 ms on a quiet machine: the scheduler's).
     */
    public static final Path LIBRARY = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");

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
                "FAKETIME_CACHE_DURATION", "1", "FAKETIME_DONT_FAKE_MONOTONIC", "1",
                // The "monotonic fix" rewrites every timed wait of the JVM's threads; with the monotonic clock left alone it
                // fixes nothing and cost a launcher start 6.5 CPU s instead of 0.8 (2026-12-06): a stepped sweeper's restarts
                // then loaded the machine to 19-27 through a whole harness run.
                "FAKETIME_FORCE_MONOTONIC_FIX", "0");
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
