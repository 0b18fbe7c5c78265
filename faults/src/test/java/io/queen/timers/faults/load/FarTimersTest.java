package io.queen.timers.faults.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * About one delayMs schedule in five is due 30-90 s out, the rest within 3 s; and a third of the cancels and reschedules
 * are aimed at a timer due 30-90 s after them (issue 49, point 4): those are what a cancel or reschedule answered
 * too_late cannot be excused for (docs/fault-harness.md "The semantics replayed").
 */
class FarTimersTest {

    /** The CI run's pace: 20,000 commands in 240 s. */
    private static final long STEP_MS = 12;

    @Test
    void aboutAFifthOfDelaysAreFar() {
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
        // the aimed reschedules stay far five times in six: more than a fifth in all
        assertThat((double) far / delays).isBetween(0.18, 0.35);
    }

    @Test
    void aThirdOfCancelsAndReschedulesMeetATimerDueThirtyToNinetySecondsOut() {
        long t0 = 1_800_000_000_000L;
        long[] now = {t0};
        CommandGenerator gen = new CommandGenerator(20261203, 200, 0.03, 0.005, 0.003, 0.002).clock(() -> Instant.ofEpochMilli(now[0]));
        // the generator's own record of each timer's time, replayed from its intents: not what it aimed at, what it sent
        Map<String, Long> due = new HashMap<>();
        int aimable = 0;
        int far = 0;
        for (int seq = 0; seq < 20_000; seq++) {
            now[0] = t0 + seq * STEP_MS;
            Intent in = gen.next(seq).intent();
            if (in.kind() != CommandKind.VALID || in.recurring()) {
                continue;
            }
            String timer = in.tenant() + "/" + in.queue() + "/" + in.key();
            if (in.cancel() || "reschedule".equals(in.op())) {
                aimable++;
                Long d = due.get(timer);
                if (d != null && d - now[0] >= CommandGenerator.FAR_MIN_MS && d - now[0] <= CommandGenerator.FAR_MAX_MS) {
                    far++;
                }
            }
            if (in.cancel()) {
                due.remove(timer);
            } else {
                due.put(timer, in.due(now[0]).toEpochMilli());
            }
        }
        assertThat((double) far / aimable).as(far + " of " + aimable).isGreaterThanOrEqualTo(1.0 / 3);
    }
}
