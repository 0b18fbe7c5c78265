package io.queen.timers.sweeper.loop;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.core.db.ErrorClass;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What /health/ready says about one sweep loop (pure state, no database). */
class LoopStateTest {

    @Test
    void aLoopThatDiedOfAnErrorIsNotReadyAndSaysOfWhat() {
        LoopState s = new LoopState("sweeper-loop-1", Duration.ofSeconds(30));
        s.cycleStarted();
        s.died(new OutOfMemoryError("Java heap space"));
        assertThat(s.dead()).isTrue();
        assertThat(s.problem()).hasValueSatisfying(p -> assertThat(p)
                .isEqualTo("sweeper-loop-1 died of java.lang.OutOfMemoryError: Java heap space; the sweeper stops so that it can be restarted"));
    }

    @Test
    void aBrokenDeploymentIsReportedAtOnceAndClearsWithTheNextGoodCycle() {
        LoopState s = new LoopState("sweeper-loop-0", Duration.ofSeconds(30));
        s.cycleStarted();
        s.cycleFailed(ErrorClass.DEPLOYMENT, "SQLSTATE 42501: ERROR: permission denied for function timer_fire_v1");
        assertThat(s.problem()).hasValueSatisfying(p -> assertThat(p).startsWith("sweeper-loop-0 paused: the deployment is broken")
                .endsWith("permission denied for function timer_fire_v1"));
        s.cycleStarted();
        s.cycleCompleted();
        assertThat(s.problem()).isEmpty();
    }

    @Test
    void aTransientFailureIsReportedOnlyOnceItHasLastedLongerThanTheBound() throws InterruptedException {
        LoopState s = new LoopState("sweeper-loop-0", Duration.ofMillis(200));
        s.cycleStarted();
        s.cycleFailed(ErrorClass.TRANSIENT, "SQLSTATE 08006: connection lost");
        assertThat(s.problem()).isEmpty();
        Thread.sleep(300);
        s.cycleStarted();
        s.cycleFailed(ErrorClass.TRANSIENT, "SQLSTATE 08006: connection lost");
        assertThat(s.problem()).hasValueSatisfying(p -> assertThat(p).contains("every cycle has failed").contains("connection lost"));
    }

    @Test
    void aCycleRunningLongerThanTheBoundIsAStall() throws InterruptedException {
        LoopState s = new LoopState("sweeper-loop-0", Duration.ofMillis(200));
        s.cycleStarted();
        assertThat(s.problem()).isEmpty();
        Thread.sleep(300);
        assertThat(s.problem()).hasValueSatisfying(p -> assertThat(p).contains("one cycle has been running"));
        s.cycleCompleted();
        assertThat(s.problem()).isEmpty();
    }
}
