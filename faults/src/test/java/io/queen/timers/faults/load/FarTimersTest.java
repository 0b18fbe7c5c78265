package io.queen.timers.faults.load;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * About one delayMs schedule in ten is due 30-60 s out, the rest within 3 s: the far ones are what a cancel or reschedule
 * answered too_late cannot be excused for (docs/fault-harness.md "The semantics replayed"); every other draw of the seed
 * is what it was without them (a random of their own).
 */
class FarTimersTest {

    @Test
    void aTenthOfDelaysAreFarAndTheOtherDrawsAreUnchanged() {
        CommandGenerator gen = new CommandGenerator(20261203, 50, 0.03, 0.005, 0.003);
        int far = 0;
        int delays = 0;
        for (int seq = 0; seq < 10_000; seq++) {
            Intent in = gen.next(seq).intent();
            if (in.kind() == CommandKind.VALID && in.delayMs() != null) {
                delays++;
                if (in.delayMs() >= CommandGenerator.FAR_MIN_MS) {
                    far++;
                    assertThat(in.delayMs()).isLessThanOrEqualTo(CommandGenerator.FAR_MAX_MS);
                } else {
                    assertThat(in.delayMs()).isLessThan(3_000);
                }
            }
        }
        assertThat((double) far / delays).isBetween(0.08, 0.12);
    }
}
