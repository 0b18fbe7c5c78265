package io.queen.timers.relay;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.queen.timers.core.config.AuditTopics;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.config.HealthSettings;
import io.queen.timers.core.health.LoopProgress;
import io.queen.timers.core.retry.Backoff;
import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
 *   <li><b>One active relay per database, under a lease.</b> A relay publishes only while it holds the relay lease
 *       (queen.timer_audit_relay_lease: a row only the relay's roles may take, through {@code queen.timer_audit_lease_v1}, for the owner's
 *       {@code queen.timer_settings.relay_lease}); the database refuses its read and its delete without the live lease's
 *       token, its read records the rows it hands out under a token, and its delete removes only those
 *       (db/current/R__timer_audit_relay.sql). The others stand by and try the lease every
 *       {@code audit.relay.standby.interval}. The holder renews it when a third of it has passed, and starts a send only
 *       while the send's timeout (and a margin) still fits in what is left of it, counted on this JVM's monotonic clock
 *       from before the call that took or renewed it: so every send of a relay that lost its lease (a crash, a network
 *       cut, a long pause) has landed or failed before the lease runs out on the database's clock and another relay can
 *       take it, and the events of one key keep their order across the hand-over. PRICE: a relay that dies without
 *       letting go is replaced only when its lease runs out (up to {@code relay_lease}, 20 s by default, of audit delay);
 *       one stopped cleanly lets go at once. It was an advisory lock, which any login could take and hold.</li>
 *   <li><b>Order.</b> Rows are published in id order through an idempotent producer (acks=all), so
 *       the events of one key keep their order in its Kafka partition within a complete round. A round with a
 *       failed send (a batch expired while the broker was away, a later one landed) is sent again whole, so the
 *       first copies of two events may be inverted; the last copies are in order (docs/guarantees.md#the-bridges-guarantees, "Audit"). A {@code fired} row is one segment
 *       and becomes one event per timer, in frame order; the fetch reads raw columns and
 *       {@link AuditEventValue} renders each value (docs/decisions.md#who-renders-the-audit-event).</li>
 *   <li><b>Trace context.</b> A record whose event carries a trace (the command's W3C context) gets it as
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
    private static final String LEASE = SqlFile.load(AuditRelay.class, "lease.sql");
    private static final String RELEASE = SqlFile.load(AuditRelay.class, "release.sql");
    /** Beyond the send timeout, what must be left of the lease for a send to start: the broker's append after the ack's wait. */
    static final Duration SEND_MARGIN = Duration.ofSeconds(1);
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
    /** {@code audit.relay.send.timeout}: a send lands or fails within it, so one starts only while it fits in the lease. */
    private final Duration sendTimeout;
    /**
     * The lease this relay holds (its token), kept across tenures while it was not let go: a tenure that ended on a
     * failed statement renews its own lease at the next, instead of waiting it out. The relay's thread only.
     */
    private UUID leaseToken;
    /** When the lease runs out, on System.nanoTime(): counted from before the call that took or renewed it. */
    private long leaseDeadline;
    private long leaseNanos;
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
        this(dataSource, audit, common, registry, new LoopProgress("audit-relay", common.health(), Clock.systemUTC()));
    }

    /** As above; the relay reports each round to {@code progress} (readiness: held topics, failing rounds, death). */
    public AuditRelay(DataSource dataSource, AuditSettings audit, CommonSettings common, MeterRegistry registry, LoopProgress progress) {
        this.dataSource = dataSource;
        this.registry = registry;
        this.progress = progress;
        this.topics = audit.topics();
        this.batchSize = audit.outbox().batchSize();
        this.pollInterval = audit.outbox().pollInterval();
        this.standbyInterval = audit.outbox().standbyInterval();
        this.maxBackoff = common.outages().retryBackoffMax();
        this.sendTimeout = audit.producer().sendTimeout();
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
        long sendMs = audit.producer().sendTimeout().toMillis();
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, sendMs);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) sendMs);
        p.put(ProducerConfig.LINGER_MS_CONFIG, (int) audit.producer().linger().toMillis());
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, audit.producer().compression());
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, audit.producer().maxBatchBytes());
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
                .description("1 while this process's relay holds the per-database relay lease")
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

    /** True while this relay holds the lease and publishes. */
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
                relayWhileLeased();
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

    /** Holds one connection for as long as the lease and the connection work; returns when stopped or standing by. */
    private void relayWhileLeased() throws SQLException, InterruptedException {
        progress.begin();
        boolean leased;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            leased = holdLease(c);
            if (leased) {
                relayLeased(c);
            }
        }
        if (!leased) {
            // standing by is this relay's work while another one publishes; its connection is back in the pool meanwhile
            progress.completed();
            pause(standbyInterval);
        }
    }

    /** One tenure on the connection {@code c}; lets the lease go when it ends, after the producer's last sends completed. */
    private void relayLeased(Connection c) throws SQLException, InterruptedException {
        // A new producer per tenure: after a refused send its sequence state is not trusted.
        try (Producer<String, String> producer = new KafkaProducer<>(producerProps);
             KafkaClientMetrics meters = new KafkaClientMetrics(producer)) {
            // the producer's own meters (kafka_producer_*) while it lives; closing them removes them with it
            meters.bindTo(registry);
            active.set(true);
            LOG.info("audit relay active (holds the relay lease of this database, {} ms, renewed while it publishes)",
                    Duration.ofNanos(leaseNanos).toMillis());
            listen(c);
            while (running.get()) {
                if (!keepLease(c)) {
                    LOG.warn("audit relay: lost the relay lease (it ran out before this relay renewed it, and another took it);"
                            + " standing by");
                    break;
                }
                int n = relayOnce(c, producer);
                if (System.nanoTime() - backlogAtNanos >= 0) {
                    updateBacklog(c);
                    backlogAtNanos = System.nanoTime() + BACKLOG_EVERY.toNanos();
                }
                progress.completed();
                if (n == 0 && held.excludedTenants().isEmpty()) {
                    awaitOutbox(c, untilRenewal(pollInterval));
                } else if (n == 0) {
                    // what is left belongs to held topics: a round per commit would re-read past their rows each time
                    // (fetch.sql's PRICE), so the poll paces the rounds until the holds lift
                    pause(untilRenewal(pollInterval));
                }
                progress.begin();
            }
        } finally {
            // the producer is closed by now (try-with-resources closes before finally): its sends have landed or failed
            unlisten(c);
            active.set(false);
            // a standing-by relay holds nothing: the holds are reported again by the next tenure's first round
            progress.impaired(null);
            heldSnapshot = Map.of();
            release(c);
        }
    }

    /**
     * Takes the lease, or renews this relay's own; false when another relay holds it. Refuses a lease that a send's
     * timeout does not fit in twice (with it, a relay could hardly send before it had to renew): the owner's
     * relay_lease and this process's {@code audit.relay.send.timeout} disagree.
     */
    private boolean holdLease(Connection c) throws SQLException {
        long before = System.nanoTime();
        try (PreparedStatement st = c.prepareStatement(LEASE)) {
            st.setObject(1, leaseToken);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    leaseToken = null;
                    return false;
                }
                leaseToken = rs.getObject("token", UUID.class);
                leaseNanos = Duration.ofMillis(rs.getLong("lease_ms")).toNanos();
                leaseDeadline = before + leaseNanos;
            }
        }
        if (leaseNanos < 2 * sendTimeout.toNanos()) {
            release(c);
            throw new IllegalStateException(AuditSettings.RELAY_SEND_TIMEOUT + " = " + sendTimeout.toMillis() + " ms does not fit the owner's"
                    + " queen.timer_settings.relay_lease = " + Duration.ofNanos(leaseNanos).toMillis() + " ms: a relay starts a send only while"
                    + " the send's timeout fits in its lease, which must be at least twice the send timeout; lower the setting, or as the"
                    + " schema's owner UPDATE queen.timer_settings SET relay_lease = ...");
        }
        return true;
    }

    /** Renews the lease when a third of it has passed, or when a send no longer fits in what is left; false when lost. */
    private boolean keepLease(Connection c) throws SQLException {
        long left = leaseDeadline - System.nanoTime();
        if (left > leaseNanos * 2 / 3 && left > sendTimeout.plus(SEND_MARGIN).toNanos()) {
            return true;
        }
        return holdLease(c);
    }

    /** Whether a send started now lands or fails before the lease runs out (with the margin). */
    private boolean sendFits() {
        return leaseDeadline - System.nanoTime() > sendTimeout.plus(SEND_MARGIN).toNanos();
    }

    /** {@code wait}, or less: the time until the lease is due for renewal. */
    private Duration untilRenewal(Duration wait) {
        long due = leaseDeadline - leaseNanos * 2 / 3 - System.nanoTime();
        return Duration.ofNanos(Math.max(Duration.ofMillis(1).toNanos(), Math.min(wait.toNanos(), due)));
    }

    /**
     * Lets the lease go, so a standing-by relay takes it at its next try. When that fails (the session is gone) the lease
     * runs out by itself, and this relay keeps its token: its next tenure renews its own lease instead of waiting.
     */
    private void release(Connection c) {
        if (leaseToken == null) {
            return;
        }
        try (PreparedStatement st = c.prepareStatement(RELEASE)) {
            st.setObject(1, leaseToken);
            st.execute();
            leaseToken = null;
        } catch (SQLException e) {
            LOG.debug("audit relay: letting the lease go failed ({}); it runs out by itself", e.getMessage());
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
        if (!keepLease(c)) {
            // another relay holds it now: it publishes these rows again (the same eventIds), after every send of this round
            throw new SQLException("the relay lease ran out during a round and another relay took it; the round's rows stay in the outbox");
        }
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
            st.setObject(1, leaseToken);
            st.setArray(2, c.createArrayOf("uuid", held.excludedTenants().toArray()));
            st.setInt(3, batchSize);
            st.setInt(4, batchSize);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    round.events++;
                    long id = rs.getLong("id");
                    if (!sendFits()) {
                        // no send may land after the lease ran out: this row (a segment may be half sent) and the rest wait
                        round.rowTopic.remove(id);
                        break;
                    }
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
                st.setObject(1, leaseToken);
                st.setObject(2, round.readToken);
                st.setArray(3, c.createArrayOf("bigint", done.toArray()));
                st.execute(); // a SELECT of queen.timer_audit_delete_v3: the relay's role may not DELETE itself
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

    /**
     * While active the relay LISTENs on its connection for {@code queen_timers_audit}, which the outbox's insert
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
     * for its next user and hold back the server's notification queue); letting the lease go after it then fails, and the
     * lease runs out by itself.
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
