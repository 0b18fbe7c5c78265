package io.queen.timers.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.faults.inject.FaultKind;
import org.junit.jupiter.api.Test;

/** The short run CI makes (no flags but its seed and the strict switches) asks the sizes docs/fault-harness.md states. */
class HarnessOptionsTest {

    @Test
    void theDefaultRunPlansThirtyOfEveryKindBothClockStepsTwentyThousandCommandsAndAFaultFreeTail() {
        HarnessOptions o = HarnessOptions.parse(new String[] {"--seed", "20261203", "--strict-exits", "--strict-faults"});
        for (FaultKind k : FaultKind.values()) {
            if (k != FaultKind.CLOCK_STEP) {
                assertThat(o.faults().get(k)).as(k.flag()).isGreaterThanOrEqualTo(30);
            }
        }
        // the sweeper plans by the database's clock: one step ahead and one behind are in every short run
        assertThat(o.faults().get(FaultKind.CLOCK_STEP)).as("clock-step").isEqualTo(2);
        assertThat(o.commands()).isGreaterThanOrEqualTo(20_000);
        // issue 49 point 2: a minute of load after the faults and their recovery, and at least 500 fires judged in it
        assertThat(o.tailMs()).isGreaterThanOrEqualTo(60_000);
        assertThat(o.minFaultFreeFires()).isGreaterThanOrEqualTo(500);
        assertThat(o.strictExits()).isTrue();
        assertThat(o.strictFaults()).isTrue();
    }

    @Test
    void strictFaultsIsOffUnlessAsked() {
        assertThat(HarnessOptions.parse(new String[] {"--seed", "1"}).strictFaults()).isFalse();
    }

    @Test
    void aRunWithoutFaultsRequiresNoFaultFreeTail() {
        assertThat(HarnessOptions.parse(new String[] {"--no-faults"}).minFaultFreeFires()).isZero();
    }
}
