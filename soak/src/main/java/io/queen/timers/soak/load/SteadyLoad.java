package io.queen.timers.soak.load;

import io.queen.timers.log.codec.TxnHash;
import io.queen.timers.testkit.Poison;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The steady load, the same for every variant (a fixed random seed): {@code rate} commands per second in ticks
 * of 100 ms, for two tenants (75 % / 25 %), 4 queues, 3 log partitions. Of the commands, 1 % are
 * poisoned schedules (the destination refuses their txn: they back off and reach the DLQ), 9 % cancels
 * and 9 % reschedules of a timer scheduled recently and not due for at least 5 s more, the rest new
 * schedules. Delays are uniform from 1 s to {@code maxDelaySeconds}, so about
 * {@code rate * maxDelaySeconds / 2} timers are pending once the first delays have run out.
 *
 * <p>Every payload carries its own delivery time ({@code "d"}, epoch ms), so lateness can be read
 * from the log alone: segment {@code created_at} minus {@code d}.
 */
public final class SteadyLoad {

    /** The default tenant (CommonSettings.DEFAULT_TENANT): topic A's, named explicitly as the bridge requires of every topic. */
    public static final String TENANT_A = "00000000-0000-0000-0000-000000000001";
    public static final String TENANT_B = "0b0b0b0b-0000-4000-8000-00000000000b";
    private static final String[] PARTITIONS = {"Default", "p1", "p2"};
    private static final int QUEUES = 4;
    private static final int RECENT = 1 << 16;
    private static final String PAD = "x".repeat(140);

    private final String bootstrap;
    private final String topicA;
    private final String topicB;
    private final int rate;
    private final int maxDelayMs;
    private final Supplier<Connection> poisonDb;
    private final AtomicLong produced = new AtomicLong();
    private final AtomicLong sendFailures = new AtomicLong();
    private volatile boolean stop;

    // Recently scheduled timers, a ring: the targets of cancels and reschedules.
    private final int[] recentTopic = new int[RECENT];
    private final String[] recentQueue = new String[RECENT];
    private final String[] recentKey = new String[RECENT];
    private final String[] recentPartition = new String[RECENT];
    private final long[] recentDue = new long[RECENT];
    private long recentCount;

    public SteadyLoad(String bootstrap, String topicA, String topicB, int rate, int maxDelaySeconds, Supplier<Connection> poisonDb) {
        this.bootstrap = bootstrap;
        this.topicA = topicA;
        this.topicB = topicB;
        this.rate = rate;
        this.maxDelayMs = maxDelaySeconds * 1000;
        this.poisonDb = poisonDb;
    }

    public long produced() {
        return produced.get();
    }

    public long sendFailures() {
        return sendFailures.get();
    }

    public void stop() {
        stop = true;
    }

    /** Produces until {@link #stop()} or {@code durationMs}; the pace is kept against the start, not per tick. */
    public void run(long durationMs) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        SplittableRandom rnd = new SplittableRandom(20261203L);
        long start = System.currentTimeMillis();
        long seq = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            while (!stop && System.currentTimeMillis() - start < durationMs) {
                long elapsed = System.currentTimeMillis() - start;
                long target = (elapsed + 100) * rate / 1000;
                List<ProducerRecord<byte[], byte[]>> tick = new ArrayList<>();
                List<String> poisoned = new ArrayList<>();
                long now = System.currentTimeMillis();
                for (; seq < target; seq++) {
                    tick.add(next(rnd, seq, now, poisoned));
                }
                if (!poisoned.isEmpty()) {
                    try (Connection c = poisonDb.get()) {
                        Poison.register(c, poisoned.stream().map(TxnHash::of).toList());
                    }
                }
                for (var r : tick) {
                    producer.send(r, (md, e) -> {
                        if (e != null) {
                            sendFailures.incrementAndGet();
                        }
                    });
                }
                produced.addAndGet(tick.size());
                long sleep = start + elapsed + 100 - System.currentTimeMillis();
                if (sleep > 0) {
                    Thread.sleep(sleep);
                }
            }
            producer.flush();
        }
    }

    private ProducerRecord<byte[], byte[]> next(SplittableRandom rnd, long seq, long now, List<String> poisoned) {
        double r = rnd.nextDouble();
        if (r >= 0.01 && r < 0.19 && recentCount > 0) {
            int i = (int) ((recentCount - 1 - rnd.nextInt((int) Math.min(recentCount, RECENT))) & (RECENT - 1));
            if (recentDue[i] > now + 5_000) {
                String topic = recentTopic[i] == 0 ? topicA : topicB;
                if (r < 0.10) {
                    recentDue[i] = 0; // cancelled: not a target any more
                    return record(topic, recentQueue[i], recentKey[i], "{\"op\":\"cancel\",\"queue\":\"" + recentQueue[i]
                            + "\",\"timerKey\":\"" + recentKey[i] + "\"}");
                }
                long due = now + 1_000 + rnd.nextInt(maxDelayMs - 1_000);
                recentDue[i] = due;
                return record(topic, recentQueue[i], recentKey[i], schedule("reschedule", recentQueue[i], recentKey[i], recentPartition[i],
                        due, "soak-" + seq, seq));
            }
        }
        int topic = rnd.nextInt(4) == 0 ? 1 : 0;
        String queue = "soak.q" + rnd.nextInt(QUEUES);
        String key = "k" + seq;
        String partition = PARTITIONS[rnd.nextInt(PARTITIONS.length)];
        long due = now + 1_000 + rnd.nextInt(maxDelayMs - 1_000);
        String txn = "soak-" + seq;
        if (r < 0.01) {
            txn = "poison-" + seq;
            poisoned.add(txn);
        } else {
            int i = (int) (recentCount++ & (RECENT - 1));
            recentTopic[i] = topic;
            recentQueue[i] = queue;
            recentKey[i] = key;
            recentPartition[i] = partition;
            recentDue[i] = due;
        }
        return record(topic == 0 ? topicA : topicB, queue, key, schedule("schedule", queue, key, partition, due, txn, seq));
    }

    private static String schedule(String op, String queue, String key, String partition, long due, String txn, long seq) {
        return "{\"op\":\"" + op + "\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + key + "\",\"partition\":\"" + partition
                + "\",\"deliverAt\":\"" + Instant.ofEpochMilli(due) + "\",\"txn\":\"" + txn + "\",\"payload\":{\"d\":" + due
                + ",\"n\":" + seq + ",\"pad\":\"" + PAD + "\"}}";
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, String queue, String key, String json) {
        return new ProducerRecord<>(topic, (queue + "/" + key).getBytes(StandardCharsets.UTF_8), json.getBytes(StandardCharsets.UTF_8));
    }
}
