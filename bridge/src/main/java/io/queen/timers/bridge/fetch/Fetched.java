package io.queen.timers.bridge.fetch;

import io.queen.timers.bridge.wire.RecordLimits;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/** One offset of a command partition as the bridge read it: a record, or an offset it does not read ({@link Unreadable}). */
public sealed interface Fetched {

    TopicPartition partition();

    long offset();

    /** The heap this offset holds while it is handed over: what the poll's and the batch's byte budgets count. */
    long heldBytes();

    /**
     * A record read whole, within the limits of {@link RecordDecoder}.
     *
     * @param heldBytes its key, value and headers and the objects around them, counted from the wire's lengths
     *                  ({@link RecordLimits#heldBytes})
     */
    record Readable(ConsumerRecord<byte[], byte[]> record, long heldBytes) implements Fetched {
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
     * @param end   the end of the run (exclusive): {@code first + 1} when the record is unreadable alone and the rest of
     *              its batch is read
     * @param why   one line, for the verdict's detail and the log
     */
    record Unreadable(TopicPartition partition, long offset, long first, long end, String why) implements Fetched {

        /** Unreadable alone: the records after it in its batch are read. */
        public boolean alone() {
            return end == first + 1;
        }

        /** The object, its partition's and its reason's text (UTF-16 at worst): a reason is one line of a few hundred. */
        @Override
        public long heldBytes() {
            return RecordLimits.RECORD_OBJECT_BYTES + 2L * why.length();
        }
    }
}
