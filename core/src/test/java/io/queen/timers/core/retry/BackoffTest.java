package io.queen.timers.core.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The one retry policy (full jitter under a doubling ceiling): its bounds, and that replicas do not retry in lockstep. */
class BackoffTest {

    /** The run-time settings of the database loops: 100 ms doubling to db.retry.backoff.max's default. */
    private static final Duration BASE = Duration.ofMillis(100);
    private static final Duration CAP = Duration.ofSeconds(30);

    @Test
    void everyWaitIsBetweenZeroAndItsCeilingAndNeverAboveTheCap() {
        Backoff b = new Backoff(BASE, CAP, new SplittableRandom(7));
        Backoff.Waits w = b.waits();
        for (int i = 0; i < 1_000; i++) {
            Duration ceiling = b.ceiling(Math.min(i, 64));
            Duration d = w.next();
            assertThat(d).isGreaterThanOrEqualTo(Duration.ZERO).isLessThanOrEqualTo(ceiling).isLessThanOrEqualTo(CAP);
        }
    }

    @Test
    void theCeilingDoublesFromTheBaseToTheCapAndStaysThere() {
        Backoff b = new Backoff(BASE, CAP);
        assertThat(b.ceiling(0)).isEqualTo(BASE);
        assertThat(b.ceiling(1)).isEqualTo(Duration.ofMillis(200));
        assertThat(b.ceiling(8)).isEqualTo(Duration.ofMillis(25_600));
        assertThat(b.ceiling(9)).isEqualTo(CAP);
        assertThat(b.ceiling(63)).isEqualTo(CAP);
        assertThat(b.ceiling(Integer.MAX_VALUE)).isEqualTo(CAP); // no overflow
        assertThat(new Backoff(Duration.ofDays(1), Duration.ofDays(365)).ceiling(1_000)).isEqualTo(Duration.ofDays(365));
    }

    @Test
    void waitsGrowToTheCap() {
        Backoff.Waits w = new Backoff(BASE, CAP, new SplittableRandom(11)).waits();
        List<Duration> waits = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            waits.add(w.next());
        }
        // the first waits are held under their small ceilings; later ones use the whole [0, cap]
        assertThat(waits.get(0)).isLessThanOrEqualTo(BASE);
        assertThat(waits.get(1)).isLessThanOrEqualTo(Duration.ofMillis(200));
        Duration longest = waits.stream().skip(9).max(Duration::compareTo).orElseThrow();
        assertThat(longest).isGreaterThan(CAP.multipliedBy(9).dividedBy(10));
        assertThat(w.attempt()).isEqualTo(64); // stops counting: never wraps
    }

    @Test
    void resetStartsAgainFromTheBase() {
        Backoff.Waits w = new Backoff(BASE, CAP, new SplittableRandom(3)).waits();
        for (int i = 0; i < 20; i++) {
            w.next();
        }
        w.reset();
        assertThat(w.attempt()).isZero();
        assertThat(w.next()).isLessThanOrEqualTo(BASE);
        assertThat(w.next()).isLessThanOrEqualTo(Duration.ofMillis(200));
    }

    @Test
    void aCapEqualToTheBaseIsAFixedCeiling() {
        Backoff.Waits w = new Backoff(Duration.ofSeconds(5), Duration.ofSeconds(5), new SplittableRandom(5)).waits();
        for (int i = 0; i < 100; i++) {
            assertThat(w.next()).isLessThanOrEqualTo(Duration.ofSeconds(5));
        }
    }

    @Test
    void aCapBelowTheBaseIsEveryCeiling() {
        Backoff b = new Backoff(Duration.ofMillis(200), Duration.ofMillis(100));
        assertThat(b.ceiling(0)).isEqualTo(Duration.ofMillis(100));
        assertThat(b.ceiling(5)).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void refusesABaseOrCapOfZero() {
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, CAP)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backoff(BASE, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Two replicas after a failover: both fail at the same instant, then wait 10 times. With plain doubling their
     * schedules are equal (distance 0, lockstep); with jitter they must differ by more than a tenth of the cap in all.
     * Fixed, different seeds (as two processes have different ones): deterministic, it cannot fail by chance.
     */
    @Test
    void twoReplicasDoNotRetryInLockstep() {
        List<Duration> a = schedule(new Backoff(BASE, CAP, new SplittableRandom(1)), 10);
        List<Duration> b = schedule(new Backoff(BASE, CAP, new SplittableRandom(2)), 10);
        assertThat(distance(a, b)).isGreaterThan(CAP.dividedBy(10));
    }

    /**
     * The same with the default random source, as each process builds its policy: 30 waits of 100 ms doubling to 1 s,
     * 26 of them with the whole [0, 1 s] to draw from. Two independent uniform draws on [0, c] differ by D with density
     * at most 2/c, so P(sum of the 26 |a - b| &lt; 1 s) &lt;= 2^26 / 26! &lt; 2e-19: it does not fail by chance.
     */
    @Test
    void twoDefaultPoliciesDoNotShareASeed() {
        Duration cap = Duration.ofSeconds(1);
        List<Duration> a = schedule(new Backoff(BASE, cap), 30);
        List<Duration> b = schedule(new Backoff(BASE, cap), 30);
        assertThat(distance(a, b)).isGreaterThan(cap);
    }

    private static List<Duration> schedule(Backoff backoff, int n) {
        Backoff.Waits w = backoff.waits();
        List<Duration> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(w.next());
        }
        return out;
    }

    /** Sum of |a_i - b_i|. */
    private static Duration distance(List<Duration> a, List<Duration> b) {
        Duration sum = Duration.ZERO;
        for (int i = 0; i < a.size(); i++) {
            sum = sum.plus(a.get(i).minus(b.get(i)).abs());
        }
        return sum;
    }
}
