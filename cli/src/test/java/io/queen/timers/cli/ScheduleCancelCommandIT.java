package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** schedule and cancel publish the envelope of docs/formats.md#envelope-form under the key queue/timerKey. */
class ScheduleCancelCommandIT {

    @Test
    void scheduleThenCancelPublishOneRecordEachInOrder() throws Exception {
        String topic = TestKafka.newTopic("cli-commands", 1);
        String bootstrap = TestKafka.bootstrapServers();

        Cli s = Cli.run("schedule", "-b", bootstrap, "-t", topic, "-q", "orders.reminders", "-k", "order-42",
                "--delay", "30s", "--txn", "remind-42", "--payload", "{\"orderId\":42}");
        assertThat(s.exitCode()).as(s.err()).isZero();
        assertThat(s.out()).contains("sent schedule orders.reminders/order-42", topic + "[0]@0");

        Cli c = Cli.run("cancel", "-b", bootstrap, "-t", topic, "-q", "orders.reminders", "-k", "order-42", "--json");
        assertThat(c.exitCode()).as(c.err()).isZero();
        assertThat(Output.mapper().readTree(c.out()).get("offset").asLong()).isEqualTo(1);

        List<ConsumerRecord<byte[], byte[]>> records = readAll(topic, 2);
        assertThat(records).allSatisfy(r -> assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("orders.reminders/order-42"));
        JsonNode schedule = Output.mapper().readTree(records.get(0).value());
        assertThat(schedule.get("op").asText()).isEqualTo("schedule");
        assertThat(schedule.get("delayMs").asLong()).isEqualTo(30_000);
        assertThat(schedule.get("txn").asText()).isEqualTo("remind-42");
        assertThat(schedule.get("payload").get("orderId").asInt()).isEqualTo(42);
        assertThat(Output.mapper().readTree(records.get(1).value()).get("op").asText()).isEqualTo("cancel");
        assertThat(records.get(0).headers().lastHeader("queen-auth")).isNull();
    }

    @Test
    void aRecurringScheduleIsPublishedWithItsRule() throws Exception {
        String topic = TestKafka.newTopic("cli-recurring", 1);
        Cli s = Cli.run("schedule", "-b", TestKafka.bootstrapServers(), "-t", topic, "-q", "reports", "-k", "nightly",
                "--cron", "30 2 * * *", "--zone", "Europe/Berlin", "--catch-up", "none");
        assertThat(s.exitCode()).as(s.err()).isZero();
        assertThat(s.out()).contains("sent schedule reports/nightly (cron '30 2 * * *' in Europe/Berlin, txn nightly)");
        JsonNode n = Output.mapper().readTree(readAll(topic, 1).get(0).value());
        assertThat(n.get("cron").asText()).isEqualTo("30 2 * * *");
        assertThat(n.get("zone").asText()).isEqualTo("Europe/Berlin");
        assertThat(n.get("catchUp").asText()).isEqualTo("none");
        assertThat(n.has("delayMs")).isFalse();
    }

    @Test
    void aTokenTravelsInTheQueenAuthHeader() throws Exception {
        String topic = TestKafka.newTopic("cli-token", 1);
        Cli c = Cli.run("cancel", "-b", TestKafka.bootstrapServers(), "-t", topic, "-q", "q", "-k", "k", "--token", "eyJ.a.b");
        assertThat(c.exitCode()).as(c.err()).isZero();
        assertThat(new String(readAll(topic, 1).get(0).headers().lastHeader("queen-auth").value(), StandardCharsets.UTF_8))
                .isEqualTo("eyJ.a.b");
    }

    @Test
    void aPayloadThatIsNotJsonIsRefusedBeforeAnythingIsSent() {
        Cli r = Cli.run("schedule", "-b", "127.0.0.1:1", "-q", "q", "-k", "k", "--delay", "1s", "--payload", "{oops");
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: --payload is not JSON");
    }

    @Test
    void exactlyOneOfDelayAndAtIsRequired() {
        Cli r = Cli.run("schedule", "-q", "q", "-k", "k", "--delay", "1s", "--at", "2030-01-01T00:00:00Z");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("mutually exclusive");
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int n) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(TestKafka.consumerProps("cli-test"))) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (out.size() < n && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }
}
