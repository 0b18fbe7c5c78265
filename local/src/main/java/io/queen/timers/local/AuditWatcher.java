package io.queen.timers.local;

import io.queen.timers.core.text.Printable;
import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.cli.Output;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads the audit topic from its end (as of start) and prints every event as it arrives: a verdict
 * or a fire, one line each, and for a fire the message read back from the log ({@link LogReadback}).
 */
final class AuditWatcher implements AutoCloseable {

    private final KafkaConsumer<String, String> consumer;
    private final PrintWriter out;
    private final boolean json;
    private final LogReadback readback;
    private final Consumer<JsonNode> listener;
    private final Thread thread;
    private volatile boolean running = true;

    AuditWatcher(String bootstrap, String topic, PrintWriter out, boolean json, LogReadback readback, Consumer<JsonNode> listener) {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "queen-local-audit-watcher");
        this.consumer = new KafkaConsumer<>(p);
        this.out = out;
        this.json = json;
        this.readback = readback;
        this.listener = listener;
        List<TopicPartition> parts = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                .map(i -> new TopicPartition(topic, i.partition())).toList();
        consumer.assign(parts);
        consumer.seekToEnd(parts);
        parts.forEach(consumer::position); // resolve the end now, before the demo publishes anything
        this.thread = new Thread(this::loop, "local-audit-watcher");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        try {
            while (running) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    JsonNode event;
                    try {
                        event = Output.mapper().readTree(r.value());
                    } catch (Exception e) {
                        print("audit record " + r.partition() + "@" + r.offset() + " is not JSON: " + r.value(),
                                Output.toJson(java.util.Map.of("notJson", String.valueOf(r.value()))));
                        continue;
                    }
                    show(event);
                    listener.accept(event);
                }
            }
        } catch (WakeupException stopping) {
            // close() woke us up
        } finally {
            consumer.close(Duration.ofSeconds(2));
        }
    }

    private void show(JsonNode e) {
        print(humanLine(e), e.toString());
        if (e.path("type").asText().equals("fired")) {
            readback.find(e).ifPresent(m -> print(String.format("%s    log          %s", now(), m.human()), m.json()));
        }
    }

    /** One audit event for people: time, type, timer, and what the type adds. */
    static String humanLine(JsonNode e) {
        String type = e.path("type").asText();
        // a record rejected before its key could be read names no timer: its source says which record it was
        String target = e.hasNonNull("queue") ? e.path("queue").asText() + "/" + e.path("timerKey").asText("?") : "(record)";
        StringBuilder line = new StringBuilder(String.format("%s  %-13s %s", now(), type, target));
        switch (type) {
            case "fired" -> line.append("  -> log offset ").append(e.path("offset").asText("?"))
                    .append(", ").append(e.path("lateMs").asText("?")).append(" ms late");
            case "rejected" -> line.append("  reason ").append(e.path("reason").asText("?"));
            case "retrying", "dead_lettered" -> line.append("  attempts ").append(e.path("attempts").asText("?"))
                    .append(": ").append(e.path("error").asText(""));
            default -> {
                if (e.hasNonNull("deliverAt")) {
                    line.append("  deliver at ").append(e.path("deliverAt").asText());
                }
            }
        }
        JsonNode src = e.path("source");
        if (src.isObject()) {
            line.append("  (").append(src.path("topic").asText()).append('[').append(src.path("partition").asText())
                    .append("]@").append(src.path("offset").asText()).append(')');
        }
        return line.toString();
    }

    private void print(String human, String jsonLine) {
        synchronized (out) {
            out.println(printable(human, jsonLine, json));
            out.flush();
        }
    }

    /**
     * What is printed: a producer's key, txn or error text must not reach the terminal raw (CR, LF, ESC
     * sequences); escaping keeps a JSON line valid JSON with the same value.
     */
    static String printable(String human, String jsonLine, boolean json) {
        return Printable.line(json ? jsonLine : human);
    }

    private static String now() {
        return LocalTime.now().truncatedTo(ChronoUnit.MILLIS).toString();
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
