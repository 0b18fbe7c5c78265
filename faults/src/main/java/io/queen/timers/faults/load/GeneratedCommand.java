package io.queen.timers.faults.load;

import org.apache.kafka.clients.producer.ProducerRecord;

/** One generated record, its kind, and the txn a poisoned one carries (else null). */
public record GeneratedCommand(long seq, CommandKind kind, ProducerRecord<byte[], byte[]> record, String poisonTxn) {
}
