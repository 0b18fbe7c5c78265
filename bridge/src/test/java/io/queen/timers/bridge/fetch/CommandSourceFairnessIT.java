package io.queen.timers.bridge.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.bridge.wire.RecordLimits;
import io.queen.timers.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * One tenant's read-ahead does not hold another's, on a real broker, counted in fetches and polls rather than timed: a
 * topic with nothing left to hand over is fetched again while another topic's partitions still hold what their last fetch
 * brought, and every topic with something read ahead has a share of every poll, however many partitions another has.
 * The consumer settings are the bridge's defaults ({@code BridgeMain.consumerProps}); the source's clock is the test's, so
 * that the wait before an idle partition is asked again is stepped over, not slept through.
 */
class CommandSourceFairnessIT {

    /** The bridge's defaults: fetch.max.wait.ms, max.partition.fetch.bytes, fetch.max.bytes, max.poll.records. */
    static final int MAX_WAIT_MS = 100;
    static final int PARTITION_MAX_BYTES = 64 * 1024;
    static final int FETCH_MAX_BYTES = 8 << 20;
    static final int MAX_POLL_RECORDS = 7;
    static final RecordLimits LIMITS = new RecordLimits(1 << 20, 64, 32 * 1024);
    static final long DECOMPRESSION_BUDGET = 32 << 20;

    @Test
    void aTopicWithNothingLeftIsFetchedAgainWhileAnotherStillHoldsReadAhead() throws Exception {
        String flood = TestKafka.newTopic("source-flood", 4);
        String quiet = TestKafka.newTopic("source-quiet", 1);
        TopicPartition q = new TopicPartition(quiet, 0);
        // more than one fetch brings (64 KiB a partition): the flood's partitions hold read-ahead for many polls
        produce(flood, 4, 2_000);
        AtomicLong clock = new AtomicLong();
        try (CommandSource source = started(List.of(flood, quiet), 5, clock)) {
            // the first round: one long poll of every partition, answered with the flood's records and nothing of the quiet's
            List<Fetched> got = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30)).until(() -> got.addAll(source.poll(Duration.ofMillis(200)).items()));
            assertThat(got).noneMatch(f -> f.partition().equals(q));
            List<TopicPartition> floods = partitions(flood, 4);
            produce(quiet, 1, 1);

            // asked again no sooner than a long poll would have answered: not yet
            got.addAll(source.poll(Duration.ZERO).items());
            assertThat(source.fetching(q)).as("the idle quiet partition, asked again before fetch.max.wait.ms").isFalse();

            // once that much has passed, it is fetched again while the flood still holds what its round brought
            clock.addAndGet(Duration.ofMillis(MAX_WAIT_MS).toNanos());
            got.addAll(source.poll(Duration.ZERO).items());
            assertThat(floods).as("the flood's partitions hold read-ahead").anyMatch(source::holdsReadAhead);
            assertThat(source.fetching(q)).as("the quiet partition is fetched while the flood holds read-ahead").isTrue();

            // and what it brings is handed over
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                got.addAll(source.poll(Duration.ZERO).items());
                return got.stream().anyMatch(f -> f.partition().equals(q));
            });
            assertInOrderFromZero(got);
        }
    }

    @Test
    void everyTopicWithSomethingReadAheadHasAShareOfEveryPoll() throws Exception {
        String flood = TestKafka.newTopic("share-flood", 8);
        String quiet = TestKafka.newTopic("share-quiet", 1);
        produce(flood, 8, 100);
        produce(quiet, 1, 20); // more than one poll takes
        Map<TopicPartition, Integer> produced = new HashMap<>();
        partitions(flood, 8).forEach(tp -> produced.put(tp, 100));
        produced.put(new TopicPartition(quiet, 0), 20);
        try (CommandSource source = started(List.of(flood, quiet), 9, new AtomicLong())) {
            List<Fetched> got = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30)).until(() -> got.addAll(source.poll(Duration.ofMillis(200)).items()));
            for (int polls = 0; got.size() < 820; polls++) {
                assertThat(polls).as("polls to hand over 820 offsets read ahead, 7 at most each").isLessThan(820);
                // the topics that hold an offset not handed over yet (each partition's records all came in the first round)
                Set<String> waiting = new HashSet<>();
                produced.forEach((tp, n) -> {
                    if (source.holdsReadAhead(tp) && handed(got, tp) < n) {
                        waiting.add(tp.topic());
                    }
                });
                List<Fetched> items = source.poll(Duration.ofSeconds(5)).items();
                Set<String> given = new HashSet<>();
                items.forEach(f -> given.add(f.partition().topic()));
                assertThat(given).as("the topics of poll " + polls + " (" + items.size() + " offsets)").containsAll(waiting);
                got.addAll(items);
            }
            assertThat(handed(got, new TopicPartition(quiet, 0))).isEqualTo(20);
            assertInOrderFromZero(got);
        }
    }

    @Test
    void aPartitionPausedWhileItsFetchIsOutDoesNotHoldItsTopic() throws Exception {
        String topic = TestKafka.newTopic("source-paused", 2);
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        produce(topic, 2, 10); // more than one poll takes: the round is handed over in several polls
        try (CommandSource source = started(List.of(topic), 2, new AtomicLong())) {
            List<Fetched> got = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30)).until(() -> got.addAll(source.poll(Duration.ofMillis(200)).items()));
            produce(topic, 2, 1); // on the broker before the round's next fetch is sent, so that it brings them
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                got.addAll(source.poll(Duration.ZERO).items());
                return source.fetching(p0);
            });
            // its answer comes back while it is paused: it must not stay read ahead, holding the topic's next fetch
            source.pause(List.of(p0));
            long before = handed(got, p0);
            produce(topic, 2, 1);
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                got.addAll(source.poll(Duration.ofMillis(200)).items());
                return handed(got, p1) == 12;
            });
            assertThat(handed(got, p0)).as("nothing of the paused partition handed over").isEqualTo(before);
            assertThat(source.holdsReadAhead(p0)).isFalse();
            assertInOrderFromZero(got);
        }
    }

    /** A source of {@code topics} on the clock {@code clock}, its {@code partitions} assigned, sought to 0 and resumed. */
    private static CommandSource started(List<String> topics, int partitions, AtomicLong clock) {
        Map<String, Object> props = TestKafka.consumerProps("source-" + UUID.randomUUID());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, MAX_WAIT_MS);
        props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, PARTITION_MAX_BYTES);
        props.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, FETCH_MAX_BYTES);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, MAX_POLL_RECORDS);
        CommandSource source = new CommandSource(new KafkaConsumer<>(props), new ConsumerConfig(props), topics, LIMITS,
                FETCH_MAX_BYTES, DECOMPRESSION_BUDGET, new SimpleMeterRegistry(), clock::get);
        source.subscribe(topics, new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                partitions.forEach(tp -> source.seek(tp, 0));
                source.resume(partitions);
            }
        });
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            source.poll(Duration.ZERO);
            return source.assignment().size() == partitions;
        });
        return source;
    }

    /**
     * {@code perPartition} small records to each of the topic's {@code partitions} partitions, uncompressed, each
     * acknowledged. One request at a time and not idempotent: the broker answers the first requests to a topic just created
     * NOT_LEADER_OR_FOLLOWER, and an idempotent producer's retries of several in flight can then be refused for ever as out
     * of order.
     */
    private static void produce(String topic, int partitions, int perPartition) throws Exception {
        Map<String, Object> props = TestKafka.producerProps();
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(props)) {
            for (int i = 0; i < perPartition; i++) {
                for (int part = 0; part < partitions; part++) {
                    byte[] key = (topic + "/" + part + "/" + i).getBytes(StandardCharsets.UTF_8);
                    sent.add(p.send(new ProducerRecord<>(topic, part, key, ("{\"n\":" + i + ",\"pad\":\"" + "x".repeat(60) + "\"}")
                            .getBytes(StandardCharsets.UTF_8))));
                }
            }
            p.flush();
        }
        for (Future<RecordMetadata> f : sent) {
            f.get();
        }
    }

    private static List<TopicPartition> partitions(String topic, int n) {
        List<TopicPartition> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new TopicPartition(topic, i));
        }
        return out;
    }

    private static long handed(List<Fetched> got, TopicPartition tp) {
        return got.stream().filter(f -> f.partition().equals(tp)).count();
    }

    /** Each partition's offsets were handed over once each, in order, from 0, none skipped; every one readable. */
    private static void assertInOrderFromZero(List<Fetched> got) {
        Map<TopicPartition, Long> next = new HashMap<>();
        for (Fetched f : got) {
            assertThat(f).isInstanceOf(Fetched.Readable.class);
            long expected = next.getOrDefault(f.partition(), 0L);
            assertThat(f.offset()).as("the next offset of " + f.partition()).isEqualTo(expected);
            next.put(f.partition(), expected + 1);
        }
    }
}
