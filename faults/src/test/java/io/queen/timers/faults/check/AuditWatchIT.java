package io.queen.timers.faults.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * The harness's own clock on a real broker: each eventId gets the time the watch first read it (a repeat keeps the
 * first), events published before it started are read too, and {@code stop} reads to the topics' ends.
 */
class AuditWatchIT {

    @Test
    void eachEventIsTimedWhenTheWatchFirstReadsIt() throws Exception {
        String a = TestKafka.newTopic("audit-watch-a", 3);
        String b = TestKafka.newTopic("audit-watch-b", 2);
        AtomicLong clock = new AtomicLong(1_000);
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(TestKafka.producerProps(), new ByteArraySerializer(), new ByteArraySerializer())) {
            send(p, a, "{\"eventId\":\"before\",\"type\":\"scheduled\"}");
            p.flush();
            AuditWatch watch = AuditWatch.start(TestKafka.bootstrapServers(), List.of(a, b), clock::get);
            awaitRead(watch, "before");
            clock.set(5_000);
            // eventId not first, nested objects before it, and a repeat of an event read before
            send(p, b, "{\"type\":\"fired\",\"x\":{\"eventId\":\"nested\"},\"eventId\":\"later\"}");
            send(p, a, "{\"eventId\":\"before\",\"type\":\"scheduled\"}");
            p.flush();
            awaitRead(watch, "later");
            clock.set(9_000);
            send(p, a, "not json");
            send(p, b, "{\"eventId\":\"last\"}");
            p.flush();
            Map<String, Long> read = watch.stop(Duration.ofSeconds(60));
            assertThat(read).containsEntry("before", 1_000L).containsEntry("later", 5_000L).containsEntry("last", 9_000L)
                    .doesNotContainKey("nested").hasSize(3);
        }
    }

    private static void awaitRead(AuditWatch w, String eventId) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!w.hasRead(eventId)) {
            assertThat(System.nanoTime()).as("the watch reads " + eventId + " within 30 s").isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    private static void send(KafkaProducer<byte[], byte[]> p, String topic, String value) throws Exception {
        p.send(new ProducerRecord<>(topic, "q/k".getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8))).get();
    }
}
