package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.log.codec.Compression;
import io.queen.timers.stack.Stack;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.testkit.PerClass;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The claim is bounded by bytes as well as rows (V050), and a timer larger than the bound goes out alone. */
class ClaimBytesIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    private final Staging staging = new Staging(stack.get().owner());
    private final Random random = new Random(50);

    @BeforeEach
    void clean() {
        staging.clear();
    }

    @Test
    void aClaimStopsAtItsByteBound() throws Exception {
        for (int i = 0; i < 10; i++) {
            staging.schedule(DEFAULT_TENANT, "bytes.q", "k" + i, "Default", -10 + i, "txn-" + i, bytes(100_000), false);
        }
        Claimer claimer = new Claimer(stack.get().owner(), 512, Duration.ofSeconds(30), 8, 250_000);
        Claimer.Claim first = claimer.claim(250_000, true);
        assertThat(first.timers()).extracting(t -> t.key().timerKey()).containsExactly("k0", "k1");
        assertThat(first.heldBytes()).isBetween(200_000L, 250_000L);
        // what the cycle may still hold: the rest of its budget, and no oversize exception after its first claim
        assertThat(claimer.claim(250_000 - first.heldBytes(), false).timers()).isEmpty();
        assertThat(claimer.claim()).extracting(t -> t.key().timerKey()).containsExactly("k2", "k3");
    }

    @Test
    void aTimerLargerThanTheBoundIsClaimedAloneByTheFirstClaimOfACycleOnly() throws Exception {
        staging.schedule(DEFAULT_TENANT, "bytes.q", "big", "Default", -10, "txn-big", bytes(400_000), false);
        for (int i = 0; i < 3; i++) {
            staging.schedule(DEFAULT_TENANT, "bytes.q", "small-" + i, "Default", -1, "txn-small-" + i, bytes(1_000), false);
        }
        Claimer claimer = new Claimer(stack.get().owner(), 512, Duration.ofSeconds(30), 8, 250_000);
        assertThat(claimer.claim(250_000, false).timers()).isEmpty();
        assertThat(claimer.claim()).extracting(t -> t.key().timerKey()).containsExactly("big");
        assertThat(claimer.claim()).extracting(t -> t.key().timerKey()).containsExactly("small-0", "small-1", "small-2");
    }

    @Test
    void aSweeperFiresATimerLargerThanItsFireBoundOnItsOwn() {
        // incompressible, stored zstd-compressed like the bridge stores any payload above its threshold
        staging.schedule(DEFAULT_TENANT, "bytes.q", "big", "Default", -5, "txn-big", Compression.compress(bytes(300_000)), true);
        for (int i = 0; i < 20; i++) {
            staging.schedule(DEFAULT_TENANT, "bytes.q", "small-" + i, -1);
        }
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(SweeperSettings.MAX_FIRE_BYTES, 65536))) {
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        }
        assertThat(LogContents.txnCounts(stack.get().owner())).hasSize(21).allSatisfy((txn, n) -> assertThat(n).isEqualTo(1));
        assertThat(staging.count("SELECT max(end_offset - base_offset + 1) FROM queen.log_segments WHERE octet_length(blob) > 250000"))
                .as("the big timer's segment holds it alone").isEqualTo(1);
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isZero();
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND (event->>'attempts')::int = 0"))
                .isEqualTo(21);
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }
}
