package io.queen.timers.bridge.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.testkit.HostileRecords;
import io.queen.timers.testkit.HostileRecords.HostileRecord;
import io.queen.timers.testkit.WireSchemas;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * The published JSON Schemas (schemas/) against the bridge's parser, record by record, no broker:
 * what the client writes is valid by both; what the schemas refuse, the parser rejects.
 */
class SchemaAgreementTest {

    static final long TS = Instant.parse("2026-12-02T12:00:00Z").toEpochMilli();
    final CommandParser parser = new CommandParser(WireLimits.DEFAULTS);

    @Test
    void everyCommandTheClientBuildsIsValidByTheSchemasAndTheParserInBothForms() {
        List<TimerCommand> commands = List.of(
                TimerCommand.schedule("orders.reminders", "order-42").delay(Duration.ofMinutes(1)).txn("remind-42").payload("{\"orderId\":42}"),
                TimerCommand.reschedule("orders.reminders", "order-42").at(Instant.parse("2026-12-24T17:00:00Z")).txn("t")
                        .partition("p-1").payload("null"),
                TimerCommand.schedule("q", "ü/ключ 😀").delay(Duration.ZERO).txn("tx").payload("[1, 2.50, \"x\"]")
                        .traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
                TimerCommand.cancel("orders.reminders", "order-42"));
        for (TimerCommand c : commands) {
            for (ProducerRecord<byte[], byte[]> r : List.of(c.envelope("commands"), c.headers("commands"))) {
                String what = c.op() + " " + c.key() + (r.headers().toArray().length > 1 ? " (headers)" : " (envelope)");
                assertThat(WireSchemas.commandErrors(r)).as(what).isEmpty();
                Parsed p = parser.parse(r.key(), r.value(), r.headers(), TS);
                assertThat(p).as(what).isInstanceOf(Command.class);
                Command parsed = (Command) p;
                assertThat(parsed.op()).isEqualTo(c.op());
                assertThat(parsed.kafkaKey()).isEqualTo(c.key());
                if (c.op() != Op.CANCEL) {
                    assertThat(parsed.schedule().deliverAt()).isNotNull();
                }
            }
        }
    }

    @Test
    void whatTheSchemasRefuseTheParserRejects() {
        Random random = new Random(7);
        int refused = 0;
        for (int i = 0; i < 2_000; i++) {
            HostileRecord rec = HostileRecords.next(random, "agree.q");
            ProducerRecord<byte[], byte[]> r = new ProducerRecord<>("commands", null, rec.key(), rec.value(), rec.headers());
            List<String> errors = WireSchemas.commandErrors(r);
            if (!errors.isEmpty()) {
                refused++;
                assertThat(parser.parse(rec.key(), rec.value(), rec.headers(), rec.timestampMs()))
                        .as("%s, refused by the schemas: %s", HostileRecords.describe(rec), errors).isInstanceOf(Rejection.class);
            }
        }
        assertThat(refused).as("records the schemas refused").isGreaterThan(200);
    }

    @Test
    void theSchemasRefuseEachShapeTheParserRejects() {
        String ok = "\"queue\":\"q\",\"timerKey\":\"k\"";
        for (String bad : List.of(
                "{\"op\":\"snooze\"," + ok + "}",
                "{\"op\":\"cancel\",\"queue\":\"q\"}",
                "{\"op\":\"cancel\",\"queue\":5,\"timerKey\":\"k\"}",
                "{\"op\":\"cancel\"," + ok + ",\"colour\":\"red\"}",
                "{\"op\":\"cancel\"," + ok + ",\"tenant_id\":\"x\"}",
                "{\"op\":\"cancel\",\"queue\":\"a b\",\"timerKey\":\"k\"}",
                "{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"\"}",
                "{\"op\":\"cancel\"," + ok + ",\"partition\":\"\"}",
                "{\"op\":\"schedule\"," + ok + ",\"delayMs\":1,\"txn\":\"\",\"payload\":1}",
                "{\"op\":\"schedule\"," + ok + ",\"delayMs\":1,\"deliverAt\":\"2030-01-01T00:00:00Z\",\"txn\":\"t\",\"payload\":1}",
                "{\"op\":\"schedule\"," + ok + ",\"delayMs\":-1,\"txn\":\"t\",\"payload\":1}",
                "{\"op\":\"schedule\"," + ok + ",\"deliverAt\":\"2030-01-01T00:00:00\",\"txn\":\"t\",\"payload\":1}",
                "{\"op\":\"schedule\"," + ok + ",\"delayMs\":1,\"txn\":\"t\"}",
                "{\"op\":\"cancel\"," + ok + ",\"txn\":\"t\"}")) {
            byte[] value = bad.getBytes(StandardCharsets.UTF_8);
            ProducerRecord<byte[], byte[]> r = new ProducerRecord<>("commands", "q/k".getBytes(StandardCharsets.UTF_8), value);
            assertThat(WireSchemas.commandErrors(r)).as(bad).isNotEmpty();
            assertThat(parser.parse(r.key(), value, null, TS)).as(bad).isInstanceOf(Rejection.class);
        }
    }
}
