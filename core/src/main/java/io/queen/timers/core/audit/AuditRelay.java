package io.queen.timers.core.audit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import io.queen.timers.core.health.HealthSettings;
import io.queen.timers.core.health.LoopProgress;
import io.queen.timers.core.retry.Backoff;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes {@code queen.timer_audit_outbox} rows to the audit topics (docs/decisions.md#the-audit-outbox) and deletes them
 * once the broker acknowledged them.
 *
 * <ul>
 *   <li><b>One active relay per database.</b> A relay publishes only while it holds
 *       {@code pg_try_advisory_lock} on a connection of its own, and it reads and deletes on that same
 *       connection, so losing the session (database restart, terminated backend) loses the lock and the
 *       work together. The others stand by and retry every {@code audit.relay.standby.interval}. The database
 *       holds the line (issue 47): its read records the rows it hands out under a token, and its delete removes only
 *       those, only for the session holding the lock (db/current/R__timer_audit_relay.sql).</li>
 *   <li><b>Order.</b> Rows are published in id order through an idempotent producer (acks=all), so
 *       the events of one key keep their order in its Kafka partition within a complete round. A round with a
 *       failed send (a batch expired while the broker was away, a later one landed) is sent again whole, so the
 *       first copies of two events may be inverted; the last copies are in order (docs/guarantees.md#the-bridges-guarantees, "Audit"). A {@code fired} row is one segment
 *       (V026) and becomes one event per timer, in frame order; the fetch reads raw columns and
 *       {@link AuditEventValue} renders each value (docs/decisions.md#who-renders-the-audit-event).</li>
 *   <li><b>Trace context.</b> A record whose event carries a trace (the command's W3C context, V090/V127) gets it as
 *       {@code traceparent} and {@code tracestate} headers, flags and tracestate as the producer sent them, so a
 *       consumer's W3C propagator joins the producer's trace (docs/tracing.md#tracing).</li>
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
    /**
     * Arbitrary but fixed: every relay of every process agrees on it ("queenaud"). db/current/R__timer_audit_relay.sql
     * names the same number (queen.timer_audit_relay_held_v1): the database lets only its holder read and delete.
     */
    static final long LOCK_KEY = 0x7175_6565_6e61_7564L;
    /** W3C Trace Context header names, as a command record carries them too. */

    private static final String FETCH = SqlFile.load(AuditRelay.class, "fetch.sql");
    private static final String DELETE = SqlFile.load(AuditRelay.class, "delete.sql");
    private static final String BACKLOG = SqlFile.load(AuditRelay.class, "backlog.sql");
    /** The backlog is counted per tenant (a scan of the outbox): at most this often. */
    private static final Duration BACKLOG_EVERY = Duration.ofSeconds(5);

    private final DataSource dataSource;
    private final Map<String, Object> producerProps;
    private final AuditTopics topics;
    private final int batchSize;
    private final Duration pollInterval;
    private final Duration standbyInterval;
    private final Duration maxBackoff;
    /** Longest pause after a failed tenure: bounded by health.failing.after ({@link HealthSettings#retryPauseMax}). */
    private final Duration maxRetryPause;
    private final Counter published;
    /** Backlog gauge per destination topic; only the relay's thread adds to it. */
    private final Map<String, AtomicLong> backlog = new java.util.concurrent.ConcurrentHashMap<>();
    private final MeterRegistry registry;
    private final LoopProgress progress;
    private final HeldTopics held;
    private final ExecutorService prober;
    private long backlogAtNanos = System.nanoTime();
    private volatile Map<String, Instant> heldSnapshot = Map.of();
    private final AtomicBoolean active = new AtomicBoolean();
    private final AtomicBoolean running = new AtomicBoolean();
    private final Object sleeper = new Object();
    private Thread thread;

    /**
     * @param audit  {@link AuditSettings}: the batch, the pauses, the producer's bounds, each tenant's topic
     * @param common the process's shared settings: {@code kafka.*} for the producer, {@code db.retry.backoff.max}, the health bounds
     */
    public AuditRelay(DataSource dataSource, AuditSettings audit, CommonSettings common, MeterRegistry registry) {
        this(dataSource, audit, common, registry, new LoopProgress("audit-relay", common.health().bounds(), Clock.systemUTC()));
    }

    /** As above; the relay reports each round to {@code progress} (readiness: held topics, failing rounds, death). */
    public AuditRelay(DataSource dataSource, AuditSettings audit, CommonSettings common, MeterRegistry registry, LoopProgress progress) {
        this.dataSource = dataSource;
        this.registry = registry;
        this.progress = progress;
        this.topics = audit.topics();
        this.batchSize = audit.batchSize();
        this.pollInterval = audit.pollInterval();
        this.standbyInterval = audit.standbyInterval();
        this.maxBackoff = common.retryBackoffMax();
        this.maxRetryPause = common.retryPauseMax();
        this.prober = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "queen-audit-relay-probe");
            t.setDaemon(true);
            return t;
        });
        this.held = new HeldTopics(maxBackoff, prober, Clock.systemUTC());
        Map<String, Object> p = new HashMap<>(common.kafka(KafkaSettings.Client.PRODUCER));
        // Bounded sends (audit.relay.send.timeout): a topic that cannot be written fails within it and is held
        // on its own, instead of blocking every send for the client's 60 s default.
        long sendMs = audit.sendTimeout().toMillis();
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, sendMs);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) sendMs);
        p.put(ProducerConfig.LINGER_MS_CONFIG, (int) audit.linger().toMillis());
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, audit.compression());
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, audit.maxBatchBytes());
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.max(1, sendMs - 5));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "queen-timers-audit-relay");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        this.producerProps = Map.copyOf(p);
        this.published = Counter.builder("queen.timers.audit.published")
                .description("Audit events the broker acknowledged (at-least-once: a crash may publish some twice)")
                .register(registry);
        // the topics known from the settings show 0 from the start; a tenant's default topic appears with its first row
        backlogGauge(topics.defaultTopic());
        topics.configured().values().forEach(this::backlogGauge);
        Gauge.builder("queen.timers.audit.relay.active", active, a -> a.get() ? 1 : 0)
                .description("1 while this process's relay holds the per-database relay lock")
                .register(registry);
        Gauge.builder("queen.timers.audit.held.topics", this, r -> r.heldSnapshot.size())
                .description("Audit topics this relay cannot write to now, whose events wait in the outbox (0 when standing by)")
                .register(registry);
    }

    public synchronized AuditRelay start() {
        if (thread != null) {
            throw new IllegalStateException("audit relay already started");
        }
        running.set(true);
        thread = new Thread(progress.guard(this::run), "queen-audit-relay");
        thread.setDaemon(true);
        thread.start();
        return this;
    }

    /** True while this relay holds the lock and publishes. */
    public boolean isActive() {
        return active.get();
    }

    /** The settings the relay's producer is made with (a test checks kafka.producer.* reaches it, and only it). */
    Map<String, Object> producerProps() {
        return producerProps;
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
        prober.shutdownNow();
    }

    /** Topics held now and since when (tests, operators); a snapshot. */
    public Map<String, Instant> heldTopics() {
        return heldSnapshot;
    }

    private void run() {
        Backoff.Waits waits = new Backoff(Duration.ofMillis(100), maxRetryPause).waits();
        while (running.get()) {
            try {
                relayWhileLocked();
                waits.reset();
            } catch (SQLException | RuntimeException e) {
                Duration wait = waits.next();
                LOG.warn("audit relay: {}; retrying in {} ms with a new producer (rows stay in the outbox until acknowledged)",
                        e.toString(), wait.toMillis());
                progress.failed(e.toString());
                pause(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } finally {
                active.set(false);
            }
        }
    }

    /** Holds the lock connection for as long as it works; returns when stopped or standing by. */
    private void relayWhileLocked() throws SQLException, InterruptedException {
        progress.begin();
        boolean locked;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            locked = tryLock(c);
            if (locked) {
                relayLocked(c);
            }
        }
        if (!locked) {
            // standing by is this relay's work while another one publishes; its connection is back in the pool meanwhile
            progress.completed();
            pause(standbyInterval);
        }
    }

    /** One tenure on the lock connection {@code c}; releases the lock when it ends. */
    private void relayLocked(Connection c) throws SQLException, InterruptedException {
        // A new producer per tenure: after a refused send its sequence state is not trusted.
        try (Producer<String, String> producer = new KafkaProducer<>(producerProps);
             KafkaClientMetrics meters = new KafkaClientMetrics(producer)) {
            // the producer's own meters (kafka_producer_*) while it lives; closing them removes them with it
            meters.bindTo(registry);
            active.set(true);
            LOG.info("audit relay active (holds the relay lock of this database)");
            listen(c);
            while (running.get()) {
                int n = relayOnce(c, producer);
                if (System.nanoTime() - backlogAtNanos >= 0) {
                    updateBacklog(c);
                    backlogAtNanos = System.nanoTime() + BACKLOG_EVERY.toNanos();
                }
                progress.completed();
                if (n == 0 && held.excludedTenants().isEmpty()) {
                    awaitOutbox(c, pollInterval);
                } else if (n == 0) {
                    // what is left belongs to held topics: a round per commit would re-read past their rows each time
                    // (fetch.sql's PRICE), so the poll paces the rounds until the holds lift
                    pause(pollInterval);
                }
                progress.begin();
            }
        } finally {
            unlisten(c);
            active.set(false);
            // a standing-by relay holds nothing: the holds are reported again by the next tenure's first round
            progress.impaired(null);
            heldSnapshot = Map.of();
            unlock(c);
        }
    }

    /**
     * One round: read the oldest rows of every topic that is not held, publish their events (a {@code fired}
     * row is a segment: one event per timer), wait for the acks, delete the
     * rows of every topic whose sends were all acknowledged. A topic whose send fails is held
     * ({@link HeldTopics}): the rest of its events in this round are not sent, its rows stay, and later rounds
     * leave them out until a probe finds it writable. Returns the events read: about the batch size while a
     * backlog lasts (whole rows only, so one segment may exceed it).
     */
    private int relayOnce(Connection c, Producer<String, String> producer)
            throws SQLException, InterruptedException {
        held.advance(topic -> producer.partitionsFor(topic));
        Round round = sendOldest(c, producer);
        if (round.rowTopic.isEmpty()) {
            return 0;
        }
        long acked = awaitAcks(producer, round);
        deleteAcknowledged(c, round);
        settleHolds(round);
        published.increment(acked);
        progress.impaired(held.describe());
        heldSnapshot = Map.copyOf(held.heldSince());
        return round.events;
    }

    /** What one round read and sent: each row's topic (in id order), the sends awaiting their ack, the topics that failed and why. */
    private static final class Round {
        final List<Sent> sent;
        final Map<Long, String> rowTopic = new LinkedHashMap<>();
        final Map<String, String> failed = new HashMap<>();
        /** Events read: a {@code fired} row is one per timer of its segment. */
        int events;
        /** The read's token: the delete presents it, and removes only rows this read handed out. */
        UUID readToken;

        Round(int batchSize) {
            sent = new ArrayList<>(batchSize);
        }
    }

    /** Reads the oldest events of the topics not held and sends them, each topic until its first failed send. */
    private Round sendOldest(Connection c, Producer<String, String> producer) throws SQLException, InterruptedException {
        Round round = new Round(batchSize);
        try (PreparedStatement st = c.prepareStatement(FETCH)) {
            st.setArray(1, c.createArrayOf("uuid", held.excludedTenants().toArray()));
            st.setInt(2, batchSize);
            st.setInt(3, batchSize);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    round.events++;
                    long id = rs.getLong("id");
                    UUID tenant = rs.getObject("tenant_id", UUID.class);
                    String topic = topics.topicFor(tenant);
                    held.seen(topic, tenant);
                    round.rowTopic.put(id, topic);
                    round.readToken = rs.getObject("read_token", UUID.class);
                    if (round.failed.containsKey(topic) || !held.sendable(topic)) {
                        continue; // order kept: nothing after a failed event of this topic goes out in this round
                    }
                    Future<RecordMetadata> ack = producer.send(AuditEventValue.record(rs, topic)); // blocks up to the send timeout while the topic has no metadata
                    if (ack.isDone() && failure(ack) != null) {
                        round.failed.put(topic, failure(ack).toString());
                    } else {
                        round.sent.add(new Sent(topic, ack));
                    }
                }
            }
        }
        return round;
    }

    /** Waits for every send of the round; returns the events acknowledged on topics none of whose sends failed. */
    private static long awaitAcks(Producer<String, String> producer, Round round) throws InterruptedException {
        producer.flush(); // bounded: every send completes or fails within delivery.timeout.ms
        for (Sent s : round.sent) {
            Throwable f = failure(s.ack());
            if (f != null) {
                round.failed.putIfAbsent(s.topic(), f.toString());
            }
        }
        return round.sent.stream().filter(s -> !round.failed.containsKey(s.topic())).count();
    }

    /** Deletes the rows of every topic whose sends were all acknowledged; a failed or held topic's rows stay. */
    private void deleteAcknowledged(Connection c, Round round) throws SQLException {
        List<Long> done = new ArrayList<>(round.rowTopic.size());
        round.rowTopic.forEach((id, topic) -> {
            if (!round.failed.containsKey(topic) && held.sendable(topic)) {
                done.add(id);
            }
        });
        if (!done.isEmpty()) {
            try (PreparedStatement st = c.prepareStatement(DELETE)) {
                st.setObject(1, round.readToken);
                st.setArray(2, c.createArrayOf("bigint", done.toArray()));
                st.execute(); // a SELECT of queen.timer_audit_delete_v2: the relay's role may not DELETE itself
            }
        }
    }

    /** A topic whose send failed is held ({@link HeldTopics}, said once); one whose sends all landed is not. */
    private void settleHolds(Round round) {
        for (String topic : new java.util.LinkedHashSet<>(round.rowTopic.values())) {
            String why = round.failed.get(topic);
            if (why != null) {
                if (held.sendable(topic)) {
                    LOG.warn("audit relay: cannot publish to topic {} ({}); holding its events (order kept) while the other topics flow",
                            topic, why);
                }
                held.fail(topic, why);
            } else if (held.sendable(topic)) {
                held.succeeded(topic);
            }
        }
    }

    private record Sent(String topic, Future<RecordMetadata> ack) {}

    /**
     * The error of a completed send, or null when it was acknowledged. An error that says the producer itself
     * is broken (not the topic) is thrown, so the tenure ends and a new producer is made.
     */
    private static Throwable failure(Future<RecordMetadata> ack) throws InterruptedException {
        try {
            ack.get();
            return null;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RetriableException || cause instanceof TopicAuthorizationException
                    || cause instanceof InvalidTopicException || cause instanceof RecordTooLargeException) {
                return cause;
            }
            throw new KafkaException("the audit producer failed: " + cause, cause);
        }
    }

    /** Rows waiting per destination topic; a topic that drained reads 0. */
    private void updateBacklog(Connection c) throws SQLException {
        Map<String, Long> rows = new HashMap<>();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(BACKLOG)) {
            while (rs.next()) {
                rows.merge(topics.topicFor(rs.getObject("tenant_id", UUID.class)), rs.getLong("rows"), Long::sum);
            }
        }
        backlog.keySet().forEach(t -> rows.putIfAbsent(t, 0L));
        rows.forEach((topic, n) -> backlogGauge(topic).set(n));
    }

    private AtomicLong backlogGauge(String topic) {
        return backlog.computeIfAbsent(topic, t -> {
            AtomicLong g = new AtomicLong();
            Gauge.builder("queen.timers.audit.outbox.backlog", g, AtomicLong::get).tag("topic", t)
                    .description("Outbox rows not yet published, per destination topic (a fired row holds one segment's events),"
                            + " as seen by the active relay")
                    .register(registry);
            return g;
        });
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

    /**
     * The connection goes back to the pool: it must not carry the session lock with it, or every relay of the
     * database (this one included, on its next connection) would stand by for ever behind an idle pooled
     * session. When the unlock fails the session is dropped instead; if the session is gone, the lock went with it.
     */
    private static void unlock(Connection c) {
        try (PreparedStatement st = c.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            st.setLong(1, LOCK_KEY);
            st.execute();
        } catch (SQLException e) {
            dropSession(c);
        }
    }

    /**
     * While active the relay LISTENs on its lock connection for {@code queen_timers_audit}, which the outbox's insert
     * trigger sends at the commit of every transaction that wrote it (R__timer_audit_relay.sql): an idle relay
     * publishes a new event at once instead of at its next poll. A notification that arrives during a round waits in
     * the driver and ends the next wait at once, so none is lost; the poll interval stays the bound when one is.
     */
    private static void listen(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("LISTEN queen_timers_audit");
        }
    }

    /**
     * The connection goes back to the pool after the tenure: it stops listening, and what the driver queued is dropped.
     * When UNLISTEN fails the session is dropped instead (a listening session in the pool would queue notifications
     * for its next user and hold back the server's notification queue); the unlock after it then finds it gone.
     */
    private static void unlisten(Connection c) {
        try (Statement st = c.createStatement()) {
            st.execute("UNLISTEN queen_timers_audit");
            c.unwrap(PGConnection.class).getNotifications();
        } catch (SQLException e) {
            LOG.debug("UNLISTEN at the end of the relay's tenure failed ({}); dropping the session", e.getMessage());
            dropSession(c);
        }
    }

    /** Drops the session instead of handing it back to the pool in a state the next user must not inherit. */
    private static void dropSession(Connection c) {
        try {
            c.abort(Runnable::run);
        } catch (SQLException | RuntimeException alreadyGone) {
            // nothing left to drop
        }
    }

    /** How long one wait on the socket lasts at most, so that close() is seen within it whatever the poll interval. */
    private static final long AWAIT_SLICE_MILLIS = 100;

    /** Up to {@code d}, or until the outbox trigger's notification arrives, or close(). */
    private void awaitOutbox(Connection c, Duration d) throws SQLException {
        PGConnection pg = c.unwrap(PGConnection.class);
        long deadline = System.nanoTime() + d.toNanos();
        while (running.get()) {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                return;
            }
            PGNotification[] n = pg.getNotifications((int) Math.max(1, Math.min(AWAIT_SLICE_MILLIS, left)));
            if (n != null && n.length > 0) {
                return;
            }
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
}
