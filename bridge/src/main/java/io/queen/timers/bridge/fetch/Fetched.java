package io.queen.timers.bridge.fetch;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/** One offset of a command partition as the bridge read it: a record, or an offset it does not read ({@link Unreadable}). */
public sealed interface Fetched {

    TopicPartition partition();

    long offset();

    /** A record read whole, within the bounds of {@link PartitionReader}. */
    record Readable(ConsumerRecord<byte[], byte[]> record) implements Fetched {
        @Override
        public TopicPartition partition() {
            return new TopicPartition(record.topic(), record.partition());
        }

        @Override
        public long offset() {
            return record.offset();
        }
    }

    /**
     * An offset whose record the bridge does not read ({@link PartitionReader} says which and why): it is answered
     * {@code rejected}/{@code unreadable_record} like any record, in its place.
     *
     * @param first the first unreadable offset of its run: the record the reason is about; the later offsets of the run
     *              follow it in the same producer batch
     * @param why   one line, for the verdict's detail and the log
     */
    record Unreadable(TopicPartition partition, long offset, long first, String why) implements Fetched {}
}
