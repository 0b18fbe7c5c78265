package io.queen.timers.bridge.fetch;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.Metadata;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient;
import org.apache.kafka.clients.consumer.internals.ConsumerUtils;
import org.apache.kafka.clients.consumer.internals.RequestFuture;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.internals.ClusterResourceListeners;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Timer;
import org.apache.kafka.common.utils.internals.LogContext;

/**
 * Sends Fetch requests for the command partitions to their leaders and hands back each partition's answer as the broker
 * sent it: the records still in their batches, undecoded. Decoding is {@link PartitionReader}'s, so that no byte of a
 * record is turned into an object by code that trusts the length the record declares.
 *
 * <p>It is built from Kafka's own client parts, as the consumer builds its fetcher: the network client (connections, TLS,
 * SASL, throttling, reconnection backoff, request timeouts), the metadata (bootstrap, leaders, topic ids, refresh on
 * error). What it does not do that the consumer does: fetch sessions (every request lists its partitions: a few hundred
 * bytes per request for a bridge's partitions), reading from a follower, and the check of a new leader's epoch against
 * the fetched log (a log truncated by an unclean leader election, then written again past the position, is read on from
 * the position; truncated below it, the position is out of range and the partition stops, as with any out-of-range
 * offset).
 *
 * <p>PRICE: these are Kafka's internal classes ({@code org.apache.kafka.clients.consumer.internals},
 * {@code org.apache.kafka.common.record.internal}): an upgrade of kafka-clients is an upgrade of this class too, and
 * the bridge's ITs are what check it. One request per leader is in flight at a time. Not thread-safe, except
 * {@link #wakeup()}.
 */
final class Fetcher implements AutoCloseable {

    /**
     * One partition's answer to one fetch; {@code records} is empty unless {@code error} is NONE. {@code response} is the
     * buffer the answer was read into (null for an error): every partition's records of one response are slices of it,
     * so it is held whole while any of them is read.
     */
    record Result(TopicPartition tp, long fetchOffset, Errors error, MemoryRecords records,
                  List<FetchResponseData.AbortedTransaction> aborted, long highWatermark, long lastStable, Response response) {}

    /**
     * The buffer one fetch response was read into, shared by its partitions' records; compared by identity. {@code bytes}:
     * the records of every partition in it, and {@link #PARTITION_FIELDS_BYTES} for each partition's other fields.
     */
    static final class Response {
        final long bytes;

        Response(long bytes) {
            this.bytes = bytes;
        }
    }

    /**
     * What a partition's answer holds in a response besides its records, at most: its index, error, offsets, preferred
     * replica, the records' length and tagged fields (about 40 bytes), and a few aborted transactions (16 bytes each).
     */
    static final int PARTITION_FIELDS_BYTES = 128;

    private final Time time = Time.SYSTEM;
    private final Metrics metrics = new Metrics();
    private final Metadata metadata;
    private final ConsumerNetworkClient client;
    private final IsolationLevel isolation;
    private final int maxWaitMs;
    private final int minBytes;
    private final int partitionMaxBytes;
    /**
     * The fetch in flight to each node: its future, the offsets it asked for, the topic names its ids stand for, the most its
     * response may bring (the broker's rule: that, or the first partition's first batch when it alone is larger), and
     * whether the broker may hold it (fetch.max.wait.ms).
     */
    private final Map<Integer, InFlight> inFlight = new HashMap<>();

    private record InFlight(RequestFuture<ClientResponse> future, Map<TopicPartition, Long> offsets, Map<Uuid, String> names,
                            long maxBytes, boolean longPoll) {}

    Fetcher(ConsumerConfig config, List<String> topics) {
        LogContext log = new LogContext("[queen-timers fetch " + config.getString(CommonClientConfigs.CLIENT_ID_CONFIG) + "] ");
        long backoff = config.getLong(CommonClientConfigs.RETRY_BACKOFF_MS_CONFIG);
        this.metadata = new Metadata(backoff, config.getLong(CommonClientConfigs.RETRY_BACKOFF_MAX_MS_CONFIG),
                config.getLong(CommonClientConfigs.METADATA_MAX_AGE_CONFIG), log, new ClusterResourceListeners()) {
            // only the command topics: a cluster's whole metadata would be read at every refresh otherwise
            @Override
            protected MetadataRequest.Builder newMetadataRequestBuilder() {
                return new MetadataRequest.Builder(List.copyOf(topics), false);
            }
        };
        ClientUtils.maybeBootstrapMetadataSynchronously(config, config.getList(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG), metadata);
        this.client = ConsumerUtils.createConsumerNetworkClient(config, metrics, log, new ApiVersions(), time, metadata, null,
                backoff, null);
        this.isolation = IsolationLevel.valueOf(config.getString(ConsumerConfig.ISOLATION_LEVEL_CONFIG).toUpperCase(java.util.Locale.ROOT));
        this.maxWaitMs = config.getInt(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG);
        this.minBytes = config.getInt(ConsumerConfig.FETCH_MIN_BYTES_CONFIG);
        this.partitionMaxBytes = config.getInt(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG);
        metadata.requestUpdate(true);
    }

    IsolationLevel isolation() {
        return isolation;
    }

    /**
     * Sends one fetch to each leader of {@code wanted} (partition → offset) that has none in flight; a partition whose leader
     * is unknown is left out and a metadata refresh is asked for (it is sent once the leader is known). A {@code longPoll}
     * the broker holds until one of its partitions has data or fetch.max.wait.ms has passed; otherwise it answers at once
     * with what the partitions have. The responses together bring at most {@code maxBytes} (split evenly between the
     * leaders), besides the one batch a broker returns whole when it is the first it found and larger.
     */
    void send(Map<TopicPartition, Long> wanted, boolean longPoll, long maxBytes) {
        long leaders = wanted.keySet().stream().map(tp -> metadata.currentLeader(tp).leader.map(Node::id).orElse(-1)).distinct().count();
        int each = (int) Math.max(1, Math.min(Integer.MAX_VALUE, maxBytes / leaders));
        request(wanted, longPoll ? maxWaitMs : 0, each);
    }

    private void request(Map<TopicPartition, Long> wanted, int waitMs, int requestMaxBytes) {
        Map<Node, Map<TopicPartition, FetchRequest.PartitionData>> byNode = new LinkedHashMap<>();
        Map<String, Uuid> ids = metadata.topicIds();
        for (Map.Entry<TopicPartition, Long> e : wanted.entrySet()) {
            TopicPartition tp = e.getKey();
            Metadata.LeaderAndEpoch leader = metadata.currentLeader(tp);
            if (leader.leader.isEmpty()) {
                metadata.requestUpdate(false);
                continue;
            }
            Node node = leader.leader.get();
            if (inFlight.containsKey(node.id()) || client.isUnavailable(node)) {
                continue;
            }
            Uuid id = ids.getOrDefault(tp.topic(), Uuid.ZERO_UUID);
            byNode.computeIfAbsent(node, n -> new LinkedHashMap<>()).put(tp, new FetchRequest.PartitionData(id, e.getValue(),
                    FetchRequest.INVALID_LOG_START_OFFSET, partitionMaxBytes, leader.epoch));
        }
        Map<Uuid, String> names = metadata.topicNames();
        for (Map.Entry<Node, Map<TopicPartition, FetchRequest.PartitionData>> e : byNode.entrySet()) {
            Map<TopicPartition, FetchRequest.PartitionData> data = e.getValue();
            // topic ids from Fetch v13 on; before the metadata has them, by name (v12), as Kafka's consumer does
            boolean byId = data.values().stream().noneMatch(d -> Uuid.ZERO_UUID.equals(d.topicId));
            short version = byId ? ApiKeys.FETCH.latestVersion() : 12;
            FetchRequest.Builder request = FetchRequest.Builder.forConsumer(version, waitMs, minBytes, data)
                    .isolationLevel(isolation).setMaxBytes(requestMaxBytes).metadata(FetchMetadata.LEGACY);
            Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
            data.forEach((tp, d) -> offsets.put(tp, d.fetchOffset));
            inFlight.put(e.getKey().id(), new InFlight(client.send(e.getKey(), request), offsets, names, requestMaxBytes, waitMs > 0));
        }
        client.transmitSends();
    }

    /** True while a fetch of {@code tp} is in flight. */
    boolean inFlight(TopicPartition tp) {
        for (InFlight f : inFlight.values()) {
            if (f.offsets().containsKey(tp)) {
                return true;
            }
        }
        return false;
    }

    /** True while fetches are in flight and the broker answers each at once (none is a long poll). */
    boolean onlyAnsweredAtOnce() {
        return !inFlight.isEmpty() && inFlight.values().stream().noneMatch(InFlight::longPoll);
    }

    /** The most the responses of the fetches in flight may bring together, as their requests asked. */
    long inFlightMaxBytes() {
        long sum = 0;
        for (InFlight f : inFlight.values()) {
            sum += f.maxBytes();
        }
        return sum;
    }

    /**
     * Waits at most {@code timeout} for a fetch to complete (none when {@code timeout} is zero) and returns the answers
     * of the completed ones. A fetch that failed as a whole (a disconnect, a timeout) answers each of its partitions with
     * the error {@link Errors#NETWORK_EXCEPTION} or the error it carried, and asks for fresh metadata. Throws what Kafka's
     * client throws for what cannot go on: an authentication failure, a wakeup.
     */
    List<Result> poll(Duration timeout) {
        Timer timer = time.timer(timeout.toMillis());
        // with nothing in flight one network poll: it sends a metadata refresh that was asked for, waits out a
        // reconnection backoff, or just waits; otherwise until a fetch completes or the time is up
        client.poll(timer, inFlight.isEmpty() ? null : () -> inFlight.values().stream().noneMatch(f -> f.future().isDone()));
        List<Result> out = new ArrayList<>();
        for (Iterator<Map.Entry<Integer, InFlight>> it = inFlight.entrySet().iterator(); it.hasNext(); ) {
            InFlight f = it.next().getValue();
            if (!f.future().isDone()) {
                continue;
            }
            it.remove();
            if (f.future().failed()) {
                RuntimeException e = f.future().exception();
                metadata.requestUpdate(false);
                Errors error = Errors.forException(e);
                f.offsets().forEach((tp, offset) -> out.add(failed(tp, offset, error == Errors.UNKNOWN_SERVER_ERROR ? Errors.NETWORK_EXCEPTION : error)));
                continue;
            }
            answers(f, f.future().value(), out);
        }
        return out;
    }

    private void answers(InFlight f, ClientResponse response, List<Result> out) {
        FetchResponse fetch = (FetchResponse) response.responseBody();
        if (fetch.error() != Errors.NONE) {
            metadata.requestUpdate(false);
            f.offsets().forEach((tp, offset) -> out.add(failed(tp, offset, fetch.error())));
            return;
        }
        Map<TopicPartition, FetchResponseData.PartitionData> data = fetch.responseData(f.names(), response.requestHeader().apiVersion());
        long bytes = 0;
        for (FetchResponseData.PartitionData d : data.values()) {
            bytes += PARTITION_FIELDS_BYTES + FetchResponse.recordsSize(d);
        }
        Response held = new Response(bytes);
        for (Map.Entry<TopicPartition, Long> sent : f.offsets().entrySet()) {
            TopicPartition tp = sent.getKey();
            FetchResponseData.PartitionData d = data.get(tp);
            if (d == null) {
                continue; // not answered this time (the response was full): asked again with the next fetch
            }
            Errors error = Errors.forCode(d.errorCode());
            if (error != Errors.NONE) {
                if (error != Errors.OFFSET_OUT_OF_RANGE) {
                    metadata.requestUpdate(false); // a moved leader, an unknown topic id: the usual cure
                }
                out.add(failed(tp, sent.getValue(), error));
                continue;
            }
            out.add(new Result(tp, sent.getValue(), Errors.NONE, memory(FetchResponse.recordsOrFail(d)), d.abortedTransactions(),
                    d.highWatermark(), d.lastStableOffset(), held));
        }
    }

    /** A response's records, in the buffer the response was read into: where the reader finds each batch's bytes. */
    private static MemoryRecords memory(Records records) {
        if (records instanceof MemoryRecords m) {
            return m;
        }
        throw new IllegalStateException("a fetch response's records are " + records.getClass().getName() + ", not in memory");
    }

    private static Result failed(TopicPartition tp, long offset, Errors error) {
        return new Result(tp, offset, error, MemoryRecords.EMPTY, List.of(), -1, -1, null);
    }

    /** Makes a blocked {@link #poll} throw {@link org.apache.kafka.common.errors.WakeupException}. Any thread. */
    void wakeup() {
        client.wakeup();
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (IOException e) {
            // closing sockets: nothing to do about it
        }
        metadata.close();
        metrics.close();
    }
}
