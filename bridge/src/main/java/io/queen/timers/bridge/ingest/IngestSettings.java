package io.queen.timers.bridge.ingest;

import java.time.Duration;
import java.util.List;

/**
 * What {@link IngestLoop} is told, typed once by {@code BridgeSettings} (the keys' one owner): one record instead of a
 * constructor that takes each setting on its own, where two of the same type swap silently.
 *
 * @param topics          the command topics the loop subscribes to (command.topics)
 * @param pollTimeout     the longest wait of one consumer poll (bridge.poll.timeout); also how soon a stop is seen
 * @param batchMaxBytes   value bytes a batch gathers from successive polls before it is applied (half of
 *                        bridge.ingest.max.bytes; the consumer's max.poll.records bounds the other half)
 * @param batchMaxRecords records a batch gathers at most (bridge.batch.max.records)
 * @param maxBackoff      the ceiling of the pause between retries after a failed apply or resync (db.retry.backoff.max,
 *                        at most health.failing.after)
 * @param startPosition   bridge.start.position ({@code earliest}, {@code latest}) or null: where a partition with no
 *                        stored offset starts when it holds records; null keeps it paused
 */
public record IngestSettings(List<String> topics, Duration pollTimeout, long batchMaxBytes, int batchMaxRecords,
                             Duration maxBackoff, String startPosition) {

    public IngestSettings {
        topics = List.copyOf(topics);
    }
}
