package io.queen.timers.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.faults.check.Findings;
import io.queen.timers.faults.inject.FaultKind;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 49, point 3: a run is judged on the faults that bit. A kind planned and never effective fails the run even without
 * --strict-faults (it tested nothing); one short of its plan fails a strict run and is only logged otherwise.
 */
class FaultsThatBiteTest {

    private final Map<FaultKind, Integer> plan = new EnumMap<>(Map.of(FaultKind.PAUSE, 30, FaultKind.KILL_BRIDGE, 30));
    private final Map<FaultKind, Integer> bit = new EnumMap<>(FaultKind.class);
    private final List<String> logged = new ArrayList<>();

    private Findings judge(boolean strict) {
        Findings f = new Findings();
        FaultHarness.judgeFaults(f, plan, k -> bit.getOrDefault(k, 0), k -> "37 attempted", strict, logged::add);
        return f;
    }

    @Test
    void aKindThatNeverBitFailsTheRunStrictOrNot() {
        bit.put(FaultKind.KILL_BRIDGE, 30);   // pause: attempted, never bit
        for (boolean strict : new boolean[] {false, true}) {
            Findings f = judge(strict);
            assertThat(f.clean()).as("strict %s", strict).isFalse();
            assertThat(f.count(FaultHarness.NEVER_BIT)).isEqualTo(1);
            assertThat(f.examples().get(FaultHarness.NEVER_BIT)).containsExactly("pause: 0 of 30 effective (37 attempted)");
        }
    }

    @Test
    void aKindShortOfItsPlanFailsOnlyAStrictRun() {
        bit.put(FaultKind.KILL_BRIDGE, 30);
        bit.put(FaultKind.PAUSE, 29);
        assertThat(judge(false).clean()).isTrue();
        assertThat(logged).containsExactly("fewer faults than planned: pause: 29 of 30 effective (37 attempted)");
        Findings strict = judge(true);
        assertThat(strict.count(FaultHarness.FEWER_THAN_PLANNED)).isEqualTo(1);
        assertThat(strict.count(FaultHarness.NEVER_BIT)).isZero();
    }

    @Test
    void everyKindAtItsPlanPasses() {
        bit.put(FaultKind.KILL_BRIDGE, 30);
        bit.put(FaultKind.PAUSE, 30);
        assertThat(judge(true).clean()).isTrue();
    }
}
