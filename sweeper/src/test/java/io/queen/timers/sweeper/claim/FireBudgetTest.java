package io.queen.timers.sweeper.claim;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The token buckets of sweeper.tenant.fires.per.second on a clock of the test's own (docs/sweeper.md#the-fire-budget). */
class FireBudgetTest {

    static final UUID FLOOD = UUID.fromString("00000000-0000-0000-0000-0000000000aa");
    static final UUID QUIET = UUID.fromString("00000000-0000-0000-0000-0000000000bb");

    final AtomicLong clock = new AtomicLong();
    final FireBudget budget = new FireBudget(100, Duration.ofSeconds(1), clock::get);

    void advanceMillis(long ms) {
        clock.addAndGet(ms * 1_000_000);
    }

    @Test
    void aTenantWithoutABucketMayTakeATenthOfASecondAndThenWhatTheRateRefills() {
        FireBudget.Allowances first = budget.reserve();
        assertThat(first.tenants()).isEmpty();
        assertThat(first.otherwise()).isEqualTo(10);
        budget.settle(first, Map.of(FLOOD, 10));

        assertThat(budget.reserve()).satisfies(a -> {
            assertThat(a.tenants()).containsEntry(FLOOD, 0);
            budget.settle(a, Map.of());
        });
        advanceMillis(50);   // 100/s: 5 tokens
        FireBudget.Allowances later = budget.reserve();
        assertThat(later.tenants()).containsEntry(FLOOD, 5);
        budget.settle(later, Map.of(FLOOD, 5));
        advanceMillis(1_000);   // never more than the burst
        assertThat(budget.reserve().tenants()).doesNotContainKey(FLOOD);
    }

    @Test
    void twoLoopsNeverSpendTheSameTokensAndWhatAClaimDidNotTakeGoesBack() {
        budget.settle(budget.reserve(), Map.of(FLOOD, 10));
        advanceMillis(80);   // 8 tokens
        FireBudget.Allowances a = budget.reserve();
        FireBudget.Allowances b = budget.reserve();   // the other loop, while the first claims
        assertThat(a.tenants()).containsEntry(FLOOD, 8);
        assertThat(b.tenants()).containsEntry(FLOOD, 0);
        budget.settle(b, Map.of());
        budget.settle(a, Map.of(FLOOD, 3));   // took 3 of its 8: 5 go back
        assertThat(budget.reserve().tenants()).containsEntry(FLOOD, 5);
    }

    @Test
    void rowsTakenWhileTheBudgetDidNotBindEmptyTheBucketButNeverBelowZero() {
        FireBudget.Allowances a = budget.reserve();
        budget.settle(a, Map.of(FLOOD, 512, QUIET, 1));   // alone, the claim took a full batch
        assertThat(budget.reserve().tenants()).containsEntry(FLOOD, 0).containsEntry(QUIET, 9);
        advanceMillis(20);
        assertThat(budget.reserve().tenants()).containsEntry(FLOOD, 2);   // its rate at once, no debt carried
    }

    @Test
    void anEmptyClaimWaitsUntilAHeldTenantHasAFifthOfItsBurst() {
        assertThat(budget.untilRefilled()).isEmpty();   // nobody held
        budget.settle(budget.reserve(), Map.of(FLOOD, 10));
        assertThat(budget.untilRefilled()).hasValueSatisfying(d -> assertThat(d.toNanos()).isBetween(19_999_000L, 20_001_000L));   // 2 tokens at 100/s
        advanceMillis(15);
        assertThat(budget.untilRefilled()).hasValueSatisfying(d -> assertThat(d.toNanos()).isBetween(4_999_000L, 5_001_000L));
        advanceMillis(5);
        assertThat(budget.untilRefilled()).isEmpty();
    }

    /**
     * A claim that took more of a tenant than its allowance was not held by the budget (it binds only while another tenant
     * has work near): the tenant was alone, so an empty claim after it does not wait for the budget, though its bucket is
     * empty. One that took exactly its allowance may have been held, and does.
     */
    @Test
    void onlyATenantThatTookExactlyItsAllowanceCountsAsHeld() {
        budget.settle(budget.reserve(), Map.of(FLOOD, 512));   // alone: a whole batch, whatever its tokens
        budget.settle(budget.reserve(), Map.of());   // then nothing more was due
        assertThat(budget.reserve().tenants()).containsEntry(FLOOD, 0);
        assertThat(budget.untilRefilled()).as("an empty bucket nothing held").isEmpty();

        advanceMillis(50);   // 5 tokens, all of them taken: held, as far as a claim shows
        budget.settle(budget.reserve(), Map.of(FLOOD, 5));
        assertThat(budget.untilRefilled()).isPresent();
        advanceMillis(50);   // 5 tokens, 3 taken: it had no more due
        budget.settle(budget.reserve(), Map.of(FLOOD, 3));
        assertThat(budget.untilRefilled()).isEmpty();
    }

    @Test
    void theClaimReadsTheAllowancesAsNamedFields() {
        budget.settle(budget.reserve(), Map.of(FLOOD, 10));
        assertThat(budget.reserve().json()).isEqualTo("{\"near_ms\":1000,\"allowance\":10,\"tenants\":{\"" + FLOOD + "\":0}}");
        assertThat(FireBudget.off().reserve()).isNull();
        assertThat(new FireBudget(3, Duration.ofSeconds(1), clock::get).burst()).isEqualTo(1);   // at least one
    }
}
