package io.queen.timers.faults.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.bridge.wire.Command;
import io.queen.timers.bridge.wire.CommandParser;
import io.queen.timers.bridge.wire.Parsed;
import io.queen.timers.bridge.wire.Rejection;
import io.queen.timers.bridge.wire.WireLimits;
import io.queen.timers.faults.stack.Stack;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * The generator's intent agrees with the bridge's rules: every record it calls hostile is a rejection
 * by the bridge's own parser (with the harness's settings), every valid or poisoned one a command. The
 * checker relies on that split; a generator drifting from the wire rules would report the harness.
 */
class CommandGeneratorTest {

    private final CommandParser parser = new CommandParser(new WireLimits(Duration.ofDays(90), Stack.PAYLOAD_MAX_BYTES));

    @Test
    void hostileRecordsAreRejectedAndTheOthersAreCommands() {
        CommandGenerator g = new CommandGenerator(42, 50, 0.3, 0.05, 0.01);
        Map<CommandKind, Integer> seen = new EnumMap<>(CommandKind.class);
        Set<String> reasons = new HashSet<>();
        for (int seq = 0; seq < 3_000; seq++) {
            GeneratedCommand c = g.next(seq);
            ProducerRecord<byte[], byte[]> r = c.record();
            Parsed parsed = parser.parse(r.key(), r.value(), r.headers(), System.currentTimeMillis());
            seen.merge(c.kind(), 1, Integer::sum);
            if (c.kind() == CommandKind.HOSTILE) {
                assertThat(parsed).as("seq %d is hostile: %s", seq, r).isInstanceOf(Rejection.class);
                reasons.add(((Rejection) parsed).reason().wireName());
            } else {
                assertThat(parsed).as("seq %d is %s: %s", seq, c.kind(), parsed).isInstanceOf(Command.class);
            }
        }
        assertThat(seen).containsKeys(CommandKind.VALID, CommandKind.HOSTILE, CommandKind.POISON);
        assertThat(reasons).as("reject reasons the hostile records reach").hasSizeGreaterThanOrEqualTo(12);
    }

    @Test
    void theSameSeedGivesTheSameRecords() {
        CommandGenerator a = new CommandGenerator(7, 20, 0.03, 0.005, 0.003);
        CommandGenerator b = new CommandGenerator(7, 20, 0.03, 0.005, 0.003);
        for (int seq = 0; seq < 500; seq++) {
            ProducerRecord<byte[], byte[]> ra = a.next(seq).record();
            ProducerRecord<byte[], byte[]> rb = b.next(seq).record();
            assertThat(rb.topic()).isEqualTo(ra.topic());
            assertThat(rb.key()).isEqualTo(ra.key());
            if (!new String(ra.value() == null ? new byte[0] : ra.value()).contains("deliverAt")) {
                assertThat(rb.value()).isEqualTo(ra.value());
            }
        }
    }
}
