package io.queen.timers.core.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RecordKeyTest {

    @Test
    void queueSlashTimerKeyWithTheTimerKeyAsIs() {
        assertThat(RecordKey.of("orders.reminders", "order-42")).isEqualTo("orders.reminders/order-42");
        assertThat(RecordKey.of("q", "a/b")).isEqualTo("q/a/b");   // a queue name has no '/', a timer key may
    }
}
