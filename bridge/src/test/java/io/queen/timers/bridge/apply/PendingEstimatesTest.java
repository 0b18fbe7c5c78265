package io.queen.timers.bridge.apply;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** When a tenant's last count may stand for a new one (the clock is a plain counter the test moves). */
class PendingEstimatesTest {

    final AtomicLong now = new AtomicLong();
    final PendingEstimates estimates = new PendingEstimates(1_000, now::get);
    final UUID tenant = UUID.randomUUID();

    @Test
    void aTenantNeverCountedIsCounted() {
        assertThat(estimates.reusable(tenant, 1)).isEqualTo(-1);
    }

    @Test
    void aFreshCountFarFromTheCapStandsAndGrowsWithWhatTheBatchesAdmitted() {
        estimates.counted(tenant, 100);
        assertThat(estimates.reusable(tenant, 50)).isEqualTo(100);
        estimates.folded(tenant, 150);
        now.addAndGet(PendingEstimates.RECOUNT_AFTER.toNanos() - 1);
        assertThat(estimates.reusable(tenant, 50)).isEqualTo(150);
    }

    @Test
    void aCountOlderThanTheRecountIntervalIsCountedAgain() {
        estimates.counted(tenant, 100);
        estimates.folded(tenant, 120);   // folding does not make the count younger
        now.addAndGet(PendingEstimates.RECOUNT_AFTER.toNanos());
        assertThat(estimates.reusable(tenant, 1)).isEqualTo(-1);
    }

    @Test
    void aBatchThatCouldReachTheCapLessATenthIsCounted() {
        estimates.counted(tenant, 800);
        assertThat(estimates.reusable(tenant, 99)).isEqualTo(800);
        assertThat(estimates.reusable(tenant, 100)).isEqualTo(-1);   // 800 + 100 reaches 900 = 1,000 - 1,000 / 10
    }

    @Test
    void aRolledBackBatchLeavesTheEstimateHighNeverLow() {
        estimates.counted(tenant, 100);
        estimates.folded(tenant, 300);
        estimates.folded(tenant, 200);   // a retry of a smaller batch after a rollback
        assertThat(estimates.reusable(tenant, 1)).isEqualTo(300);
    }
}
