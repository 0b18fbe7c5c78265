package io.queen.timers.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.faults.inject.FaultKind;
import org.junit.jupiter.api.Test;

/** The short run CI makes (no flags but its seed and the strict switches) asks the sizes docs/fault-harness.md states. */
class HarnessOptionsTest {

    @Test
    void theDefaultRunPlansAtLeastThirtyOfEveryKindAndTwentyThousandCommands() {
        HarnessOptions o = HarnessOptions.parse(new String[] {"--seed", "20261203", "--strict-exits", "--strict-faults"});
        for (FaultKind k : FaultKind.values()) {
            assertThat(o.faults().get(k)).as(k.flag()).isGreaterThanOrEqualTo(30);
        }
        assertThat(o.commands()).isGreaterThanOrEqualTo(20_000);
        assertThat(o.strictExits()).isTrue();
        assertThat(o.strictFaults()).isTrue();
    }

    @Test
    void strictFaultsIsOffUnlessAsked() {
        assertThat(HarnessOptions.parse(new String[] {"--seed", "1"}).strictFaults()).isFalse();
    }
}
