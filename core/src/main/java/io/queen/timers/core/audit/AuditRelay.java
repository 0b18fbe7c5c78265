package io.queen.timers.core.audit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.log.SqlFile;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes {@code queen.timer_audit_outbox} rows to the audit topics (DESIGN §7) and deletes them
 * once the broker acknowledged them.
 *
 * <ul>
 *   <li><b>One active relay per database.</b> A relay publishes only while it holds
 *       {@code pg_try_advisory_lock} on a connection of its own, and it reads and deletes on that same
 *       connection, so losing the session (database restart, terminated backend) loses the lock and the
 *       work together. The others stand by and retry every {@code audit.relay.standby.interval}.</li>
 *   <li><b>Order.</b> Rows are published in id order through an idempotent producer (acks=all), so
 *       the events of one key keep their order in its Kafka partition. A {@code fired} row is one segment
 *       (V026) and becomes one event per timer, in frame order, rendered in Java by {@link FiredEvents}.</li>
 *   <li><b>At-least-once, stable eventId.</b> Rows are deleted only after every send of the round was
 *       acknowledged. A crash between the ack and the delete publishes those rows again; their
 *       {@code eventId} was minted with the row, so a consumer deduplicates on it. PRICE: duplicates
 *       after a crash, bought because a delete before the ack could lose an event.</li>
 * </ul>
 *
 * Self-contained: {@link #start()} runs it on its own thread, {@link #close()} stops it. The bridge
 * and the sweeper run the same class.
 */
public final class AuditRelay implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AuditRelay.class);
    /** Arbitrary but fixed: every relay of every process agrees on it ("queenaud"). */
    static final long LOCK_KEY = 0x7175_6565_6e61_7564L;

    private static final String FETCH = SqlFile.load(AuditRelay.class, "fetch.sql");
    private static final String DELETE = SqlFile.load(AuditRelay.class, "delete.sql");
    private static final String BACKLOG = SqlFile.load(AuditRelay.class, "backlog.sql");

    private final DataSource dataSource;
    private final Map<String, Object> producerProps;
    private final AuditTopics topics;
    private final int batchSize;
    private final Duration pollInterval;
    private final Duration standbyInterval;
    private final Duration maxBackoff;
    private final FiredEvents firedEvents = new FiredEvents(ZoneId.systemDefault());
    private final Counter published;
    private final AtomicLong backlog = new AtomicLong();
    private final AtomicBoolean active = new AtomicBoolean();
    private final AtomicBoolean running = new AtomicBoolean();
    private final Object sleeper = new Object();
    private Thread thread;

    /**
     * @param config the process's settings: {@code kafka.*} for the producer, {@code audit.topic},
     *               {@code tenant.<uuid>.audit.topic} and {@link AuditSettings}
     */
    public AuditRelay(DataSource dataSource, Config config, MeterRegistry registry) {
        this.dataSource = dataSource;
        this.topics = AuditTopics.from(config);
        this.batchSize = config.intValue(AuditSettings.RELAY_BATCH_SIZE);
        this.pollInterval = config.duration(AuditSettings.RELAY_POLL_INTERVAL);
        this.standbyInterval = config.duration(AuditSettings.RELAY_STANDBY_INTERVAL);
        this.maxBackoff = config.duration(CommonSettings.DB_RETRY_BACKOFF_MAX);
        Map<String, Object> p = new HashMap<>(config.kafka());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "queen-timers-audit-relay");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        this.producerProps = Map.copyOf(p);
        this.published = Counter.builder("queen.timers.audit.published")
                .description("Audit events the broker acknowledged (at-least-once: a crash may publish some twice)")
                .register(registry);
        Gauge.builder("queen.timers.audit.outbox.backlog", backlog, AtomicLong::get)
                .description("Outbox rows not yet published (upper bound; a fired row holds one segment's events), as seen by the active relay")
                .register(registry);
        Gauge.builder("queen.timers.audit.relay.active", active, a -> a.get() ? 1 : 0)
                .description("1 while this process's relay holds the per-database relay lock")
                .register(registry);
    }

    public synchronized AuditRelay start() {
        if (thread != null) {
            throw new IllegalStateException("audit relay already started");
        }
        running.set(true);
        thread = new Thread(this::run, "queen-audit-relay");
        thread.setDaemon(true);
        thread.start();
        return this;
    }

    /** True while this relay holds the lock and publishes. */
    public boolean isActive() {
        return active.get();
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            t = thread;
            thread = null;
        }
        running.set(false);
        synchronized (sleeper) {
            sleeper.notifyAll();
        }
        if (t != null) {
            try {
                t.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void run() {
        Duration backoff = Duration.ofMillis(100);
        while (running.get()) {
            try {
                relayWhileLocked();
                backoff = Duration.ofMillis(100);
            } catch (SQLException | RuntimeException e) {
                LOG.warn("audit relay: {}; retrying in {} ms (rows stay in the outbox until acknowledged)",
                        e.toString(), backoff.toMillis());
                pause(backoff);
                backoff = min(backoff.multipliedBy(2), maxBackoff);
            } catch (ExecutionException e) {
                LOG.warn("audit relay: the broker refused an audit event: {}; retrying in {} ms with a new producer",
                        e.getCause(), backoff.toMillis());
                pause(backoff);
                backoff = min(backoff.multipliedBy(2), maxBackoff);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } finally {
                active.set(false);
            }
        }
    }

    /** Holds the lock connection for as long as it works; returns when stopped or standing by. */
    private void relayWhileLocked() throws SQLException, ExecutionException, InterruptedException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            if (!tryLock(c)) {
                pause(standbyInterval);
                return;
            }
            // A new producer per tenure: after a refused send its sequence state is not trusted.
            try (Producer<String, String> producer = new KafkaProducer<>(producerProps)) {
                active.set(true);
                LOG.info("audit relay active (holds the relay lock of this database)");
                while (running.get()) {
                    int n = relayOnce(c, producer);
                    if (n < batchSize) {
                        updateBacklog(c);
                        if (n == 0) {
                            pause(pollInterval);
                        }
                    }
                }
            } finally {
                active.set(false);
                unlock(c);
            }
        }
    }

    /**
     * One round: read the oldest rows, publish their events (a {@code fired} row is a segment: one event
     * per timer, rendered by {@link FiredEvents}), wait for every ack, delete the rows. Returns the events:
     * about the batch size while a backlog lasts (whole rows only, so one segment may exceed it).
     */
    private int relayOnce(Connection c, Producer<String, String> producer)
            throws SQLException, ExecutionException, InterruptedException {
        List<Long> ids = new ArrayList<>(batchSize);
        List<Future<RecordMetadata>> acks = new ArrayList<>(batchSize);
        try (PreparedStatement st = c.prepareStatement(FETCH)) {
            st.setInt(1, batchSize);
            st.setInt(2, batchSize);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    long id = rs.getLong("id");
                    if (ids.isEmpty() || ids.get(ids.size() - 1) != id) {
                        ids.add(id);
                    }
                    UUID tenant = rs.getObject("tenant_id", UUID.class);
                    String topic = topics.topicFor(tenant);
                    String eventId;
                    ProducerRecord<String, String> record;
                    String value = rs.getString("value");
                    if (value != null) {
                        eventId = rs.getString("event_id");
                        record = new ProducerRecord<>(topic, rs.getString("kafka_key"), value);
                    } else {
                        FiredEvents.Fired f = fired(rs, tenant);
                        eventId = f.eventId().toString();
                        record = new ProducerRecord<>(topic, f.kafkaKey(), firedEvents.value(f));
                    }
                    record.headers().add("queen-event-id", eventId.getBytes(StandardCharsets.UTF_8));
                    acks.add(producer.send(record));
                }
            }
        }
        if (ids.isEmpty()) {
            return 0;
        }
        producer.flush();
        for (Future<RecordMetadata> ack : acks) {
            ack.get(); // throws when the broker refused: nothing of this round is deleted
        }
        try (PreparedStatement st = c.prepareStatement(DELETE)) {
            Array array = c.createArrayOf("bigint", ids.toArray());
            st.setArray(1, array);
            st.executeUpdate();
        }
        published.increment(acks.size());
        return acks.size();
    }

    private static FiredEvents.Fired fired(ResultSet rs, UUID tenant) throws SQLException {
        return new FiredEvents.Fired(rs.getObject("timer_event_id", UUID.class), tenant,
                rs.getObject("created_at", OffsetDateTime.class), rs.getString("queue"), rs.getString("partition"),
                rs.getLong("base_offset"), rs.getObject("segment_created_at", OffsetDateTime.class), rs.getLong("seq"),
                rs.getString("timer_key"), rs.getString("txn"), rs.getObject("message_id", UUID.class),
                rs.getObject("deliver_at", OffsetDateTime.class), rs.getInt("attempts"), rs.getString("producer_sub"));
    }

    private void updateBacklog(Connection c) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(BACKLOG)) {
            rs.next();
            backlog.set(rs.getLong(1));
        }
    }

    private static boolean tryLock(Connection c) throws SQLException {
        try (PreparedStatement st = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
            st.setLong(1, LOCK_KEY);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** The connection goes back to the pool: it must not carry the session lock with it. */
    private static void unlock(Connection c) {
        try (PreparedStatement st = c.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            st.setLong(1, LOCK_KEY);
            st.execute();
        } catch (SQLException e) {
            // the session is gone, and the lock with it
        }
    }

    private void pause(Duration d) {
        synchronized (sleeper) {
            if (running.get()) {
                try {
                    sleeper.wait(Math.max(1, d.toMillis()));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    running.set(false);
                }
            }
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
