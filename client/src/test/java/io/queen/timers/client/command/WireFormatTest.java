package io.queen.timers.client.command;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WireFormatTest {

    @Test
    void queueSlashTimerKeyWithTheTimerKeyAsIs() {
        assertThat(WireFormat.key("orders.reminders", "order-42")).isEqualTo("orders.reminders/order-42");
        assertThat(WireFormat.key("q", "a/b")).isEqualTo("q/a/b");   // a queue name has no '/', a timer key may
    }
}
