package io.queen.timers.faults.load;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.bridge.wire.Command;
import io.queen.timers.bridge.wire.CommandParser;
import io.queen.timers.bridge.wire.Parsed;
import io.queen.timers.bridge.wire.Rejection;
import io.queen.timers.bridge.wire.WireLimits;
import io.queen.timers.processes.stack.Stack;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * The generator's intents against the bridge's own parser, with the harness's limits: each hostile record
 * gets the reason the generator meant, and each valid one parses to the op, key, partition, txn, time and
 * payload its intent records. A wrong intent would make a run fail a correct bridge (or pass a wrong one).
 */
class IntentTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void everyIntentIsWhatTheBridgesParserReadsFromItsRecord() throws Exception {
        CommandParser parser = new CommandParser(new WireLimits(Duration.ofDays(90), Stack.PAYLOAD_MAX_BYTES));
        CommandGenerator gen = new CommandGenerator(20261203, 50, 0.3, 0.05, 0.01);
        Set<String> reasons = new HashSet<>();
        long timestamp = System.currentTimeMillis();
        for (int seq = 0; seq < 5_000; seq++) {
            GeneratedCommand g = gen.next(seq);
            Intent in = g.intent();
            ProducerRecord<byte[], byte[]> r = g.record();
            Parsed p = parser.parse(r.key(), r.value(), r.headers(), timestamp);
            if (in.kind() == CommandKind.HOSTILE) {
                assertThat(p).as("seq " + seq).isInstanceOf(Rejection.class);
                assertThat(((Rejection) p).reason().wireName()).as("seq " + seq + ": " + p).isEqualTo(in.rejectReason());
                reasons.add(in.rejectReason());
                continue;
            }
            assertThat(p).as("seq " + seq + ": " + p).isInstanceOf(Command.class);
            Command c = (Command) p;
            assertThat(c.op().name().toLowerCase()).isEqualTo(in.op());
            assertThat(c.queue()).isEqualTo(in.queue());
            assertThat(c.timerKey()).isEqualTo(in.key());
            if (!in.cancel()) {
                assertThat(c.partition()).isEqualTo(in.partition());
                assertThat(c.schedule().txn()).isEqualTo(in.txn());
                assertThat(c.schedule().deliverAt()).isEqualTo(in.due(timestamp));
                assertThat(Intent.payloadHash(JSON.readTree(c.schedule().payload()))).isEqualTo(in.payloadHash());
            }
        }
        // The reasons a record alone decides that the generator covers (docs/commands.md#reject-reasons-closed-list).
        assertThat(reasons).hasSize(13);
    }
}
