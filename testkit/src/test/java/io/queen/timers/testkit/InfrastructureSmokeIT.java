package io.queen.timers.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Proves the kit hands out real parts: a PostgreSQL that answers SQL and a broker that round-trips. */
class InfrastructureSmokeIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.empty();

    @Test
    void postgresAnswersARealQueryInAFreshDatabase() throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT current_database(), current_setting('server_version_num')::int")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo(db.database().name());
                assertThat(rs.getInt(2)).isGreaterThanOrEqualTo(150000);
            }
            st.execute("CREATE TABLE t (x int)");
            st.execute("INSERT INTO t SELECT generate_series(1, 10)");
            try (ResultSet rs = st.executeQuery("SELECT sum(x) FROM t")) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(55);
            }
        }
    }

    @Test
    void kafkaRoundTripsARecordThroughARealBroker() {
        String topic = TestKafka.newTopic("smoke", 2);
        try (var producer = new KafkaProducer<byte[], byte[]>(TestKafka.producerProps())) {
            producer.send(new ProducerRecord<>(topic, "k".getBytes(StandardCharsets.UTF_8), "hello".getBytes(StandardCharsets.UTF_8)));
            producer.flush();
        }
        List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
        try (var consumer = new KafkaConsumer<byte[], byte[]>(TestKafka.consumerProps("smoke-" + topic))) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (got.isEmpty() && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(got::add);
            }
        }
        assertThat(got).hasSize(1);
        assertThat(new String(got.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("hello");
    }
}
