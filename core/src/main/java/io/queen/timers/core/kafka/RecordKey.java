package io.queen.timers.core.kafka;

/**
 * The Kafka record key of everything about one timer: its commands and its audit events carry
 * {@code <queue>/<timerKey>}, so they land in one Kafka partition and keep their order
 * (docs/formats.md#record-key). The audit rows written by the applied migrations V026, V034 and V035
 * build the same key in SQL.
 */
public final class RecordKey {

    private RecordKey() {}

    public static String of(String queue, String timerKey) {
        return queue + "/" + timerKey;
    }
}
