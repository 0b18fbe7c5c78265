package io.queen.timers.http.api;

import io.queen.timers.inspect.StoredOffsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;

/**
 * The broker's log start and end of the partitions the offsets route and the console's overview show, asked through one
 * Admin client the process opens at start and shares: thread-safe, one set of connections, however many requests ask
 * (a Kafka client per request would cost a connection, a metadata round trip and its threads each time, and an
 * operator's page opened in a loop would open clients in a loop). Each ask is bounded by {@link #TIMEOUT}.
 * PRICE: the client's connections stay open while the process runs, used or not (the Admin client's own idle timeout
 * closes them after connections.max.idle.ms), and it logs in as the kafka.admin.* principal, which needs Describe on
 * the command topics.
 */
final class LogRanges implements AutoCloseable {

    /** Longest wait for the broker's answer; past it the rows are shown without the range, with a warning. */
    static final Duration TIMEOUT = Duration.ofSeconds(10);
    static final String CLIENT_ID = "queen-timers-api-log-ranges";

    private final Admin admin;

    /** @param adminProps the Admin client's settings (kafka.* with kafka.admin.* on top) */
    LogRanges(Map<String, Object> adminProps) {
        Map<String, Object> props = new HashMap<>(adminProps);
        props.putIfAbsent(AdminClientConfig.CLIENT_ID_CONFIG, CLIENT_ID);
        this.admin = Admin.create(props);
    }

    /** {@code stored} with each partition's log start and end. @throws KafkaException when the broker does not answer in time */
    List<StoredOffsets.Row> rows(List<StoredOffsets.Stored> stored) {
        if (stored.isEmpty()) {
            return List.of();
        }
        Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (StoredOffsets.Stored s : stored) {
            earliest.put(new TopicPartition(s.topic(), s.partition()), OffsetSpec.earliest());
            latest.put(new TopicPartition(s.topic(), s.partition()), OffsetSpec.latest());
        }
        ListOffsetsOptions options = new ListOffsetsOptions().timeoutMs((int) TIMEOUT.toMillis());
        ListOffsetsResult start = admin.listOffsets(earliest, options);
        ListOffsetsResult end = admin.listOffsets(latest, options);
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> starts = await(start);
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = await(end);
        return stored.stream().map(s -> {
            TopicPartition tp = new TopicPartition(s.topic(), s.partition());
            return new StoredOffsets.Row(s, starts.get(tp).offset(), ends.get(tp).offset());
        }).toList();
    }

    private static Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> await(ListOffsetsResult r) {
        try {
            return r.all().get(TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof KafkaException k ? k : new KafkaException(e.getCause());
        } catch (TimeoutException e) {
            throw new KafkaException("the broker did not answer within " + TIMEOUT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaException("interrupted");
        }
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
