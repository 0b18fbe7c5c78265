package io.queen.timers.processes.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process under the stepped clock's environment reads the real time plus the step, ahead and behind, and the real time
 * again after the step back (Debian's libfaketime; the fault harness installs it in CI: .ci/run).
 */
class SteppedClockTest {

    @TempDir
    Path dir;

    @Test
    void aProcessUnderTheClockReadsEachStep() throws Exception {
        assumeTrue(Files.isRegularFile(SteppedClock.LIBRARY), "libfaketime is not installed (apt-get install -y libfaketime)");
        SteppedClock clock = new SteppedClock(dir.resolve("clock"));
        assertThat(clock.probe()).isBetween(-1_000L, 1_000L);
        for (long step : new long[] {30_000, -30_000, 0}) {
            clock.step(step);
            // libfaketime caches the file for a second per process; each probe is a process of its own
            assertThat(clock.probe()).as("step %d", step).isBetween(step - 1_000, step + 1_000);
        }
    }
}
