package io.queen.timers.cli;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Sends one command record and waits for the broker's acknowledgement (bounded). */
final class Producing {

    private static final Duration TIMEOUT = Duration.ofSeconds(15);

    private Producing() {}

    static RecordMetadata send(Map<String, Object> clientProps, ProducerRecord<byte[], byte[]> record) {
        String topic = record.topic();
        Map<String, Object> p = new java.util.HashMap<>(clientProps);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) TIMEOUT.toMillis());
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis() - 1000);
        p.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "queen-timers-cli");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            return producer.send(record)
                    .get(TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Kafka did not accept the command on topic " + topic + " via "
                    + clientProps.get("bootstrap.servers") + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("Kafka at " + clientProps.get("bootstrap.servers") + " did not answer within "
                    + TIMEOUT.toSeconds() + " s (is it running? `queen-timers local` listens on " + KafkaOptions.LOCAL_BOOTSTRAP + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }
}
