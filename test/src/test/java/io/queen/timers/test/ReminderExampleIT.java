package io.queen.timers.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.audit.EventType;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.log.read.LogMessage;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The test a team copies (docs/testing-with-queen-timers.md): "remind me in 3 days", checked in seconds. One stack
 * for the class (an embedded broker and PostgreSQL); each test its own queue, so the tests do not see each other.
 */
class ReminderExampleIT {

    @RegisterExtension
    static final QueenTimersExtension queen = QueenTimersExtension.embedded();

    static final Duration VERDICT = Duration.ofSeconds(20);

    @Test
    void aReminderInThreeDaysFiresWhenTheClockSaysSo() {
        long t0 = System.nanoTime();
        AuditEvent.Verdict verdict = queen.sender().sendAndAwait(TimerCommand.schedule("reminders", "order-42")
                .delay(Duration.ofDays(3)).txn("remind-order-42").payload("{\"orderId\":42}")
                .envelope(queen.commandTopic()), VERDICT);
        assertThat(verdict).isInstanceOf(AuditEvent.Scheduled.class);
        assertThat(queen.log("reminders")).as("nothing in the log before its time").isEmpty();

        List<Clock.Moved> moved = queen.fireDue("reminders");

        assertThat(moved).extracting(Clock.Moved::timerKey).containsExactly("order-42");
        AuditEvent.Fired fired = queen.audit().await("reminders", "order-42", EventType.FIRED, Duration.ofSeconds(10));
        assertThat(fired.txn()).isEqualTo("remind-order-42");
        assertThat(fired.messageId()).isEqualTo(((AuditEvent.Scheduled) verdict).messageId());
        List<LogMessage> log = queen.log("reminders");
        assertThat(log).hasSize(1);
        assertThat(log.get(0).messageId()).isEqualTo(fired.messageId());
        assertThat(log.get(0).txn()).isEqualTo("remind-order-42");
        assertThat(log.get(0).payloadText()).isEqualTo("{\"orderId\":42}");
        assertThat(log.get(0).offset()).isEqualTo(fired.offset());
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("three days, in a few seconds").isLessThan(Duration.ofSeconds(15));
    }

    @Test
    void aReminderCancelledBeforeItsTimeNeverFires() {
        queen.sender().sendAndAwait(TimerCommand.schedule("reminders.cancelled", "order-7").delay(Duration.ofDays(3))
                .txn("remind-order-7").payload("{\"orderId\":7}").envelope(queen.commandTopic()), VERDICT);
        AuditEvent.Verdict cancel = queen.sender().sendAndAwait(TimerCommand.cancel("reminders.cancelled", "order-7")
                .envelope(queen.commandTopic()), VERDICT);
        assertThat(cancel).isInstanceOf(AuditEvent.Cancelled.class);

        assertThat(queen.fireDue("reminders.cancelled")).as("nothing left to move").isEmpty();

        assertThat(queen.log("reminders.cancelled")).isEmpty();
        assertThat(queen.audit().eventsOf("reminders.cancelled", "order-7")).extracting(AuditEvent::type)
                .containsExactly(EventType.SCHEDULED, EventType.CANCELLED);
    }
}
