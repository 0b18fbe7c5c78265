package io.queen.timers.bench.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.task.SchedulableInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Peer (b) of issue 48's steady comparison: <b>the same job built on db-scheduler</b> 16.7.1, as a process of its own
 * (started by {@code PipelineBench --peers} with the services' JVM, {@link io.queen.timers.bench.DeployedJvm}).
 *
 * <ul>
 * <li>A Kafka consumer reads the same schedule commands the bridge reads (the client's JSON envelope; {@code delayMs}
 *     counts from the record's timestamp, as the bridge counts it), schedules each poll's commands as one-time
 *     db-scheduler tasks in one batch ({@code scheduleBatch}: one JDBC batch, one transaction), publishes one
 *     {@code scheduled} event per command, and commits the offsets once the events are acknowledged: at least once,
 *     like any consumer that writes to a database and to Kafka without a transaction spanning both.</li>
 * <li>The task (instance id {@code queue/timerKey}, data: the command's fields, db-scheduler's default Java
 *     serialization) inserts the payload into {@code job_log} under its unique {@code txn} ({@code ON CONFLICT DO NOTHING}:
 *     a re-run after a crash writes it once) and publishes a {@code fired} event with {@code lateMs} (the execution's
 *     start minus its execution time), waiting for the broker's acknowledgement before the task completes, so a
 *     completed task's event is never lost.</li>
 * </ul>
 *
 * Events are {@code {"eventId","type","at","queue","timerKey","txn","deliverAt"[,"lateMs"]}} on {@code events}, keyed
 * {@code queue/timerKey}, the producer set as the project's audit relay's (acks=all, idempotent, zstd, linger 5 ms).
 * db-scheduler as in FireBench's fair runs: lock-and-fetch 1.0, 4.0, polling every 100 ms; {@code threads} (default
 * 16: a task waits for the broker's acknowledgement, so more threads than the no-op peer's 8 keep the executions
 * overlapping) on a pool of threads + 2 connections (the consumer's batch and the housekeeping beside the executions).
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.queen.timers.bench.peer.DbSchedulerJob jdbc=URL user=NAME bootstrap=HOST:PORT \
 *      commands=TOPIC events=TOPIC [threads=16] [poll=100]
 * </pre>
 * Prints {@code dbs-job running;} once the consumer holds its partitions; stops on SIGTERM.
 */
public final class DbSchedulerJob {

    /** The task's data: a command's fields, as the staged row holds them for the bridge. */
    record Job(String queue, String timerKey, String txn, byte[] payload, long dueMs) implements Serializable {}

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String LOG_TABLE = """
            CREATE TABLE IF NOT EXISTS job_log (
                id         BIGSERIAL PRIMARY KEY,
                txn        TEXT NOT NULL UNIQUE,
                queue      TEXT NOT NULL,
                timer_key  TEXT NOT NULL,
                payload    BYTEA NOT NULL,
                created_at TIMESTAMPTZ NOT NULL DEFAULT now())""";

    private DbSchedulerJob() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            a.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        int threads = Integer.parseInt(a.getOrDefault("threads", "16"));
        String events = a.get("events");
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(a.get("jdbc"));
        hc.setUsername(a.get("user"));
        hc.setMaximumPoolSize(threads + 2);
        HikariDataSource ds = new HikariDataSource(hc);
        createTables(ds);

        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer());

        OneTimeTask<Job> fire = Tasks.oneTime("fire", Job.class).execute((instance, ctx) -> {
            long start = System.currentTimeMillis();
            Job j = instance.getData();
            try (Connection c = ds.getConnection();
                    PreparedStatement ps = c.prepareStatement("INSERT INTO job_log (txn, queue, timer_key, payload) VALUES (?, ?, ?, ?)"
                            + " ON CONFLICT (txn) DO NOTHING")) {
                ps.setString(1, j.txn());
                ps.setString(2, j.queue());
                ps.setString(3, j.timerKey());
                ps.setBytes(4, j.payload());
                ps.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException("inserting " + j.txn() + " into job_log failed", e); // db-scheduler retries it
            }
            ObjectNode e = event("fired", j);
            e.put("lateMs", start - j.dueMs());
            try {
                producer.send(record(events, j, e)).get();
            } catch (Exception ex) {
                throw new IllegalStateException("publishing the fired event of " + j.txn() + " failed", ex);
            }
        });
        Scheduler scheduler = Scheduler.create(ds, fire).threads(threads).pollUsingLockAndFetch(1.0, 4.0)
                .pollingInterval(Duration.ofMillis(Integer.parseInt(a.getOrDefault("poll", "100")))).build();
        scheduler.start();

        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, "dbs-job");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.subscribe(List.of(a.get("commands")));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            consumer.wakeup();
            try {
                stopped.await();
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        }, "dbs-job-stop"));
        boolean announced = false;
        try {
            while (true) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (!announced && !consumer.assignment().isEmpty()) {
                    System.out.println("dbs-job running; " + threads + " threads, partitions " + consumer.assignment());
                    announced = true;
                }
                if (records.isEmpty()) {
                    continue;
                }
                List<SchedulableInstance<?>> batch = new ArrayList<>(records.count());
                List<ProducerRecord<byte[], byte[]>> scheduled = new ArrayList<>(records.count());
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    Job j = parse(r);
                    batch.add(SchedulableInstance.of(fire.instance(j.queue() + "/" + j.timerKey(), j), Instant.ofEpochMilli(j.dueMs())));
                    scheduled.add(record(events, j, event("scheduled", j)));
                }
                scheduler.scheduleBatch(batch);
                scheduled.forEach(producer::send);
                producer.flush();
                consumer.commitSync();
            }
        } catch (WakeupException stopping) {
            // SIGTERM
        } finally {
            consumer.close();
            scheduler.stop();
            producer.close();
            ds.close();
            stopped.countDown();
        }
    }

    /** A schedule command of the client's JSON envelope with {@code delayMs} or {@code deliverAt} (what the bench sends). */
    static Job parse(ConsumerRecord<byte[], byte[]> r) throws java.io.IOException {
        JsonNode n = JSON.readTree(r.value());
        if (!"schedule".equals(n.path("op").asText()) || !(n.has("delayMs") || n.has("deliverAt"))) {
            throw new IllegalStateException("dbs-job takes schedule commands with delayMs or deliverAt only, got " + n);
        }
        long due = n.has("delayMs") ? r.timestamp() + n.path("delayMs").asLong() : Instant.parse(n.path("deliverAt").asText()).toEpochMilli();
        return new Job(n.path("queue").asText(), n.path("timerKey").asText(), n.path("txn").asText(),
                JSON.writeValueAsBytes(n.path("payload")), due);
    }

    private static ObjectNode event(String type, Job j) {
        ObjectNode e = JSON.createObjectNode();
        e.put("eventId", UUID.randomUUID().toString());
        e.put("type", type);
        e.put("at", Instant.now().toString());
        e.put("queue", j.queue());
        e.put("timerKey", j.timerKey());
        e.put("txn", j.txn());
        e.put("deliverAt", Instant.ofEpochMilli(j.dueMs()).toString());
        return e;
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, Job j, ObjectNode e) {
        try {
            return new ProducerRecord<>(topic, (j.queue() + "/" + j.timerKey()).getBytes(StandardCharsets.UTF_8), JSON.writeValueAsBytes(e));
        } catch (com.fasterxml.jackson.core.JsonProcessingException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** db-scheduler's table and the log table, if this database has them not yet. */
    private static void createTables(HikariDataSource ds) throws SQLException {
        DbSchedulerTable.create(ds);
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute(LOG_TABLE);
        }
    }
}
