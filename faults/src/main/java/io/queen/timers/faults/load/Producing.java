package io.queen.timers.faults.load;

import io.queen.timers.log.codec.TxnHash;
import io.queen.timers.processes.PostgresProcess;
import io.queen.timers.testkit.Poison;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Publishes the generated commands at an even pace over a given time, chunk by chunk, then goes on at that pace until told
 * when to stop ({@link #stopAt}): the harness keeps the load on while its faults last and through a fault-free tail after
 * them (docs/fault-harness.md "Lateness"), so the fault-free bounds judge fires on every run. A chunk's
 * poisoned txns are registered with the refusing destination ({@link Poison}) before the chunk is sent,
 * so no poisoned timer can fire before it is poisoned. The producer is idempotent with a delivery
 * timeout longer than any outage the harness makes, so it rides broker faults out; whatever it still
 * fails to deliver is recorded by seq, and each such command fails the run (the checker's oracle judges
 * what was sent, so a command that never landed is a hole in the proof, not a detail).
 */
public final class Producing {

    private final CommandGenerator generator;
    private final PostgresProcess postgres;
    private final String bootstrap;
    private final Consumer<String> log;
    private final int commands;
    /** What each generated command by seq was meant to be; written by the producer thread, read once it ended. */
    private final List<Intent> intents = new ArrayList<>();
    private volatile long stopAtMs = Long.MAX_VALUE;
    private final AtomicLong sendFailures = new AtomicLong();
    private final AtomicLong acknowledged = new AtomicLong();
    /** Seqs whose send failed: the checker leaves them out of the oracle and the run fails on them. */
    private final java.util.Set<Long> failedSeqs = java.util.concurrent.ConcurrentHashMap.newKeySet();

    public Producing(CommandGenerator generator, PostgresProcess postgres, String bootstrap, int commands, Consumer<String> log) {
        this.generator = generator;
        this.postgres = postgres;
        this.bootstrap = bootstrap;
        this.log = log;
        this.commands = commands;
    }

    /** What each generated command by seq was meant to be: the checker's oracle (after {@link #run} returned). */
    public Intent[] intents() {
        return intents.toArray(new Intent[0]);
    }

    /**
     * Once the planned commands are sent, keep sending at their pace until {@code epochMs} (harness clock); until this is
     * called, the producer keeps going. {@code 0}: stop with the planned commands.
     */
    public void stopAt(long epochMs) {
        this.stopAtMs = epochMs;
    }

    public long sendFailures() {
        return sendFailures.get();
    }

    /** Records the broker acknowledged (acks=all): the commands that landed as far as the producer knows. */
    public long acknowledged() {
        return acknowledged.get();
    }

    public java.util.Set<Long> failedSeqs() {
        return failedSeqs;
    }

    public void run(long durationMs) throws InterruptedException {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        // long enough to outlast the faults' broker outages (seconds each), short enough that a batch the client can no
        // longer place (OutOfOrderSequence after a kill, although the broker holds it: Checker.landed) does not hold the
        // run's end for ten minutes
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "180000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "600000");
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(128L << 20));
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(4 << 20));
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        int total = commands;
        int chunk = 200;
        long start = System.currentTimeMillis();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int from = 0; from < total || System.currentTimeMillis() < stopAtMs; from += chunk) {
                int to = from < total ? Math.min(total, from + chunk) : from + chunk;
                List<GeneratedCommand> batch = new ArrayList<>(to - from);
                List<String> poison = new ArrayList<>();
                for (int seq = from; seq < to; seq++) {
                    GeneratedCommand c = generator.next(seq);
                    intents.add(c.intent());
                    batch.add(c);
                    if (c.poisonTxn() != null) {
                        poison.add(c.poisonTxn());
                    }
                }
                registerPoison(poison);
                long due = start + durationMs * to / Math.max(1, total);
                for (GeneratedCommand c : batch) {
                    producer.send(c.record(), (md, e) -> {
                        if (e != null) {
                            sendFailures.incrementAndGet();
                            failedSeqs.add(c.seq());
                        } else {
                            acknowledged.incrementAndGet();
                        }
                    });
                }
                long wait = due - System.currentTimeMillis();
                if (wait > 0) {
                    Thread.sleep(wait);
                }
                if ((to / chunk) % 50 == 0) {
                    log.accept("producer: " + to + " commands handed to the producer (" + total + " planned, then on at that pace"
                            + " while the faults and the fault-free tail last)");
                }
            }
            producer.flush();
        }
        log.accept("producer: all " + intents.size() + " commands sent (" + total + " planned), " + acknowledged.get() + " acknowledged, "
                + sendFailures.get() + " send failures");
    }

    /** Insert the poisoned txns' hashes, retrying through PostgreSQL outages (they are the harness's own faults). */
    private void registerPoison(List<String> txns) throws InterruptedException {
        if (txns.isEmpty()) {
            return;
        }
        while (true) {
            try (Connection c = postgres.connect()) {
                Poison.register(c, txns.stream().map(TxnHash::of).toList());
                return;
            } catch (SQLException e) {
                Thread.sleep(200);
            }
        }
    }
}
