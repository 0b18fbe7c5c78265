package io.queen.timers.bridge.apply;

/** Where a command came from: the coordinates every error and every audit event names. */
public record Source(String topic, int partition, long offset) {
    @Override
    public String toString() {
        return topic + "/" + partition + "@" + offset;
    }
}
