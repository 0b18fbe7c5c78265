package io.queen.timers.faults.load;

import org.apache.kafka.clients.producer.ProducerRecord;

/** One generated record, what it is meant to be, and the txn a poisoned one carries (else null). */
public record GeneratedCommand(long seq, Intent intent, ProducerRecord<byte[], byte[]> record, String poisonTxn) {

    public CommandKind kind() {
        return intent.kind();
    }
}
