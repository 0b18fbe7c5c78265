package io.queen.timers.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.command.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The example commands of the local stack, with keys unique to this run: two timers that fire
 * (one of them rescheduled nearer), one cancelled before its time, and one record that is not JSON.
 * Done when both fires and the rejection have come back on the audit topic.
 */
final class Demo {

    static final String QUEUE = "demo.reminders";

    private final String first;
    private final String second;
    private final String cancelled;
    private final String bad;
    private final Set<String> firedKeys = ConcurrentHashMap.newKeySet();
    private final CountDownLatch done = new CountDownLatch(3);
    private volatile boolean rejectedSeen;

    Demo() {
        String run = LocalTime.now().format(DateTimeFormatter.ofPattern("HHmmss"));
        this.first = "demo-" + run + "-a";
        this.second = "demo-" + run + "-b";
        this.cancelled = "demo-" + run + "-c";
        this.bad = "demo-" + run + "-bad";
    }

    /** Publishes the commands, in order, on one Kafka partition per key. */
    void publish(String bootstrap, String topic) {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "queen-local-demo");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.send(TimerCommand.schedule(QUEUE, first).delay(Duration.ofSeconds(3)).txn(first)
                    .payload("{\"demo\":\"fires in 3 s\"}").envelope(topic));
            producer.send(TimerCommand.schedule(QUEUE, second).delay(Duration.ofMinutes(10)).txn(second)
                    .payload("{\"demo\":\"rescheduled\"}").envelope(topic));
            producer.send(TimerCommand.reschedule(QUEUE, second).delay(Duration.ofSeconds(5)).txn(second)
                    .payload("{\"demo\":\"rescheduled to 5 s\"}").envelope(topic));
            producer.send(TimerCommand.schedule(QUEUE, cancelled).delay(Duration.ofSeconds(4)).txn(cancelled)
                    .payload("{\"demo\":\"never fires\"}").envelope(topic));
            producer.send(TimerCommand.cancel(QUEUE, cancelled).envelope(topic));
            producer.send(new ProducerRecord<>(topic, WireFormat.keyBytes(QUEUE, bad), "this is not JSON".getBytes(StandardCharsets.UTF_8)));
            producer.flush();
        }
    }

    /** Called with every audit event. */
    void observe(JsonNode event) {
        String type = event.path("type").asText();
        String key = event.path("timerKey").asText("");
        if (type.equals("fired") && (key.equals(first) || key.equals(second)) && firedKeys.add(key)) {
            done.countDown();
        }
        if (type.equals("rejected") && !rejectedSeen && (key.equals(bad) || !event.has("timerKey"))) {
            rejectedSeen = true;
            done.countDown();
        }
    }

    boolean awaitDone(Duration timeout) throws InterruptedException {
        return done.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    String describe() {
        return String.join("\n",
                "  schedule   " + QUEUE + "/" + first + "   in 3 s",
                "  schedule   " + QUEUE + "/" + second + "   in 10 min, then reschedule to 5 s",
                "  schedule   " + QUEUE + "/" + cancelled + "   in 4 s, then cancel",
                "  a record that is not JSON (key " + QUEUE + "/" + bad + ")");
    }
}
