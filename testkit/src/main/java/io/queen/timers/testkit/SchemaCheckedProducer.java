package io.queen.timers.testkit;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * A producer of commands that refuses, before sending, a record the JSON Schemas call invalid
 * ({@link WireSchemas#commandErrors}): the tests' own commands are well-formed by the published
 * contract. Hostile records are sent with a plain producer on purpose.
 */
public final class SchemaCheckedProducer extends KafkaProducer<byte[], byte[]> {

    SchemaCheckedProducer(Map<String, Object> props) {
        super(props);
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
        return send(record, null);
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
        List<String> errors = WireSchemas.commandErrors(record);
        if (!errors.isEmpty()) {
            throw new AssertionError("a test sent a command the schemas/ call invalid: " + errors);
        }
        return super.send(record, callback);
    }
}
