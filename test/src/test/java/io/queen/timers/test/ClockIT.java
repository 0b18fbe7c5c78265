package io.queen.timers.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.audit.EventType;
import io.queen.timers.client.command.TimerCommand;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The clock's limits as its javadoc states them; the stack handed in as a parameter (the @ExtendWith form). */
@ExtendWith(QueenTimersExtension.class)
class ClockIT {

    static final Duration VERDICT = Duration.ofSeconds(20);

    @Test
    void advanceFiresWhatTheMovedClockPassesAndLeavesTheRestStaged(QueenTimersStack queen) throws SQLException {
        schedule(queen, "advance", "in-1-day", TimerCommand.schedule("advance", "in-1-day").delay(Duration.ofDays(1)));
        schedule(queen, "advance", "in-5-days", TimerCommand.schedule("advance", "in-5-days").delay(Duration.ofDays(5)));
        Instant fiveDays = deliverAt(queen, "advance", "in-5-days");

        List<Clock.Moved> moved = queen.clock().advance("advance", Duration.ofDays(2));

        assertThat(moved).extracting(Clock.Moved::timerKey, Clock.Moved::due)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("in-1-day", true), org.assertj.core.groups.Tuple.tuple("in-5-days", false));
        assertThat(queen.log("advance")).extracting(m -> m.txn()).containsExactly("txn-in-1-day");
        assertThat(deliverAt(queen, "advance", "in-5-days")).as("two days earlier, still staged")
                .isEqualTo(fiveDays.minus(Duration.ofDays(2)));
        AuditEvent.Fired fired = queen.audit().await("advance", "in-1-day", EventType.FIRED, Duration.ofSeconds(10));
        assertThat(fired.lateMs()).as("due at the moved clock's now, not two days ago").isLessThan(Duration.ofMinutes(1).toMillis());
    }

    @Test
    void aRecurringSeriesIsLeftAlone(QueenTimersStack queen) throws SQLException {
        schedule(queen, "series", "daily", TimerCommand.schedule("series", "daily").every(Duration.ofDays(1)));
        Instant next = deliverAt(queen, "series", "daily");

        assertThat(queen.fireDue("series")).isEmpty();

        assertThat(deliverAt(queen, "series", "daily")).isEqualTo(next);
        assertThat(queen.log("series")).isEmpty();
    }

    private static void schedule(QueenTimersStack queen, String queue, String key, TimerCommand command) {
        AuditEvent.Verdict v = queen.sender().sendAndAwait(command.txn("txn-" + key).payload("{}").envelope(queen.commandTopic()), VERDICT);
        assertThat(v).as(queue + "/" + key).isInstanceOf(AuditEvent.Scheduled.class);
    }

    private static Instant deliverAt(QueenTimersStack queen, String queue, String key) throws SQLException {
        try (Connection c = queen.ownerDataSource().getConnection();
                PreparedStatement st = c.prepareStatement("SELECT deliver_at FROM queen.log_timers WHERE queue = ? AND timer_key = ?")) {
            st.setString(1, queue);
            st.setString(2, key);
            try (ResultSet rs = st.executeQuery()) {
                assertThat(rs.next()).as(queue + "/" + key + " staged").isTrue();
                return rs.getObject(1, OffsetDateTime.class).toInstant();
            }
        }
    }
}
