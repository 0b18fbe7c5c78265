package io.queen.timers.bridge.apply;

/**
 * One Kafka partition of a batch: {@code expected} is the stored next offset the consumer sought to
 * (null when the group has none stored yet), {@code next} the offset after the batch's last record.
 */
public record OffsetAdvance(String topic, int partition, Long expected, long next) {}
