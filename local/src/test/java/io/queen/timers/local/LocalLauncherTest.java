package io.queen.timers.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The full launcher is the cli's with {@code local} added: both answer help, and help is still last. */
class LocalLauncherTest {

    @Test
    void localAndTheCliSubcommandsAnswerHelp() {
        for (String sub : List.of("local", "bridge", "sweeper", "migrate", "schedule")) {
            Launch r = Launch.run(sub, "--help");
            assertThat(r.exitCode()).as(sub).isZero();
            assertThat(r.out()).as(sub).contains("Usage: queen-timers " + sub);
        }
        Launch top = Launch.run("--help");
        assertThat(top.exitCode()).isZero();
        assertThat(top.out()).contains("local", "bridge", "sweeper", "migrate");
        assertThat(top.out().indexOf("  local")).as("local is listed before help").isLessThan(top.out().indexOf("  help"));
    }

    @Test
    void localsUsageErrorsAreTheLaunchersOneLine() {
        Launch r = Launch.run("local", "--no-such-option");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: Unknown option: '--no-such-option'");
    }
}
