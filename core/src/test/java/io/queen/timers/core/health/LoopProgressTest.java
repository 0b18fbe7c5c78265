package io.queen.timers.core.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.core.config.HealthSettings;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

import org.junit.jupiter.api.Test;

/** Pure code: the readiness rules of one loop, on a clock the test moves. */
class LoopProgressTest {

    private final MovableClock clock = new MovableClock();
    private final Health health = new Health(new HealthSettings(Duration.ofSeconds(60), Duration.ofSeconds(10)), clock);

    @Test
    void aLoopThatCompletesCyclesIsReady() {
        LoopProgress relay = health.loop("audit-relay");
        for (int i = 0; i < 10; i++) {
            clock.advance(Duration.ofSeconds(30));
            relay.completed();
        }
        assertThat(relay.problem()).isEmpty();
        assertThat(health.report().ready()).isTrue();
        assertThat(health.report().text()).isEqualTo("ready\naudit-relay: ok\n");
    }

    @Test
    void aCycleRunningLongerThanTheFailingBoundIsReportedBeforeItEnds() {
        LoopProgress sweep = health.loop("sweep-0");
        sweep.begin();
        sweep.completed();
        clock.advance(Duration.ofSeconds(30)); // asleep between cycles: not counted
        assertThat(sweep.problem()).isEmpty();
        sweep.begin();
        clock.advance(Duration.ofSeconds(9));
        assertThat(sweep.problem()).isEmpty();
        clock.advance(Duration.ofSeconds(2)); // 11 s inside one cycle, bound 10 s: a call is not answering
        assertThat(sweep.problem()).hasValueSatisfying(p -> assertThat(p).startsWith("one cycle has been running since")
                .contains("11 s, bound 10 s"));
        sweep.failed("SQLSTATE 08006: socket timeout");
        assertThat(sweep.problem()).as("the call ended; one failure is retried").isEmpty();
    }

    @Test
    void aFewFailedCyclesAreRetriedWithoutLeavingReadiness() {
        LoopProgress ingest = health.loop("ingest");
        ingest.completed();
        ingest.failed("database: connection refused");
        clock.advance(Duration.ofSeconds(5));
        ingest.failed("database: connection refused");
        assertThat(ingest.problem()).isEmpty();
        ingest.completed();
        clock.advance(Duration.ofSeconds(20));
        ingest.failed("database: connection refused");
        assertThat(ingest.problem()).as("the failing run restarted at the last success").isEmpty();
    }

    @Test
    void everyCycleFailingLongerThanTheBoundIsNotReadyAndSaysWhy() {
        LoopProgress sweep = health.loop("sweep-0");
        sweep.completed();
        Instant since = clock.instant();
        for (int i = 0; i < 12; i++) {
            sweep.failed("42501 permission denied for function log_push_v1");
            clock.advance(Duration.ofSeconds(1));
        }
        sweep.failed("42501 permission denied for function log_push_v1");
        assertThat(sweep.problem()).hasValueSatisfying(p -> assertThat(p)
                .contains("every cycle failed since " + since).contains("13 cycles").contains("42501 permission denied"));
        Health.Report report = health.report();
        assertThat(report.ready()).isFalse();
        assertThat(report.text()).startsWith("not ready\nsweep-0: every cycle failed since");
        sweep.completed();
        assertThat(sweep.problem()).isEmpty();
    }

    @Test
    void idleCyclesBetweenFailuresOfBackedOffWorkDoNotEndTheFailingRunButIdlenessAfterItsRetryDoes() {
        LoopProgress sweep = health.loop("sweep-0");
        sweep.completed();
        Instant since = clock.instant();
        Duration retry = Duration.ofSeconds(2);
        for (int i = 0; i < 8; i++) {
            sweep.failed("no timer of the claim fired: 5 failed transiently, the last with SQLSTATE 55P03");
            for (int idle = 0; idle < 3; idle++) {   // the held timers back off: the cycles between find nothing due
                clock.advance(Duration.ofMillis(500));
                sweep.idle(retry);
            }
        }
        assertThat(sweep.problem()).as("idle cycles while the failed work backs off hide nothing")
                .hasValueSatisfying(p -> assertThat(p).contains("every cycle failed since " + since).contains("8 cycles")
                        .contains("55P03"));
        sweep.begin();
        clock.advance(Duration.ofSeconds(1));   // a retry under way past the window: still failing
        assertThat(sweep.problem()).isPresent();
        sweep.idle(retry);                      // it found nothing: the work did not come back (cancelled, fired elsewhere)
        assertThat(sweep.problem()).isEmpty();
    }

    @Test
    void oneFailureThenALongIdleSleepIsNotAFailingRun() {
        LoopProgress sweep = health.loop("sweep-0");
        sweep.completed();
        sweep.failed("SQLSTATE 08006: connection reset");
        clock.advance(Duration.ofMillis(300));
        sweep.idle(Duration.ofSeconds(2));      // nothing due: the loop now sleeps up to sweeper.idle.max
        clock.advance(Duration.ofSeconds(40));
        assertThat(sweep.problem()).as("the kept run ended with its window, without another cycle").isEmpty();
    }

    @Test
    void aLoopThatEndsNoCycleWithinTheBoundIsStalled() {
        LoopProgress listen = health.loop("wake-listener");
        clock.advance(Duration.ofSeconds(61));
        assertThat(listen.problem()).hasValueSatisfying(p -> assertThat(p).startsWith("no cycle completed since the start"));
        listen.completed();
        assertThat(listen.problem()).isEmpty();
        Instant last = clock.instant();
        clock.advance(Duration.ofSeconds(59));
        assertThat(listen.problem()).isEmpty();
        clock.advance(Duration.ofSeconds(2));
        assertThat(listen.problem()).hasValueSatisfying(p -> assertThat(p).contains("no cycle completed since " + last).contains("61 s"));
    }

    @Test
    void aThreadThatDiesOfAnErrorIsDeadAndTheErrorStillPropagates() {
        LoopProgress sweep = health.loop("sweep-1");
        Runnable body = sweep.guard(() -> {
            sweep.completed();
            throw new OutOfMemoryError("Java heap space");
        });
        assertThatThrownBy(body::run).isInstanceOf(OutOfMemoryError.class);
        sweep.completed(); // nothing brings a dead loop back
        assertThat(sweep.problem()).hasValueSatisfying(p -> assertThat(p).startsWith("dead since").contains("OutOfMemoryError"));
    }

    @Test
    void aStandingConditionIsReportedWhileCyclesGoOn() {
        LoopProgress relay = health.loop("audit-relay");
        relay.completed();
        relay.impaired("topic t.b held since 2026-12-03T00:00:00Z: not in the broker's metadata");
        relay.completed();
        assertThat(relay.problem()).hasValue("topic t.b held since 2026-12-03T00:00:00Z: not in the broker's metadata");
        relay.impaired(null);
        assertThat(relay.problem()).isEmpty();
    }

    /** A clock the test moves by hand. */
    static final class MovableClock extends Clock {
        private Instant now = Instant.parse("2026-12-03T00:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
