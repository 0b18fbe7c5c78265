package io.queen.timers.bridge.apply;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.bridge.crypto.QueueEncryption;
import io.queen.timers.bridge.crypto.QueueEncryption.QueueRef;
import io.queen.timers.bridge.wire.Command;
import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.bridge.wire.Rejection;
import io.queen.timers.core.telemetry.Telemetry;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.queen.timers.log.codec.Compression;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.sql.JsonRows;
import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.LongSupplier;
import javax.sql.DataSource;

/**
 * Applies one poll batch in ONE PostgreSQL transaction: lock the named timers, fold the commands per
 * timer in Kafka order into verdicts and a final state, write the final states, one outbox row per
 * record, and the offsets (check-and-set). Either all of it commits or none of it does, so a crash
 * anywhere neither loses nor re-applies a command (docs/decisions.md#exactly-once-ingest).
 *
 * <p>Message id (a UUIDv7, minted here when the schedule is applied): a schedule of a timer that
 * does not exist mints one; a reschedule of a pending timer KEEPS it. The pending timer is one message
 * that has not been delivered yet; its id was announced in the {@code scheduled} event, and keeping
 * it means every event of that timer names the message that will be delivered. A schedule after a
 * cancel (or after the fire) is a new message and gets a new id.
 *
 * <p>Ownership (docs/security.md#producer-identity): a timer belongs to the producer sub that staged it. A command
 * from a token ({@link Incoming.Authority#OWNER}) on a key staged by another sub, pending or in a sweeper's hands, is
 * rejected {@code not_owner} and changes nothing: a cancel, a reschedule, and a schedule too (on a staged key a
 * schedule IS a reschedule: it would replace the payload and time under the id another producer announced). A
 * key not staged belongs to nobody, so the first schedule makes its sub the owner; an admin token, or a topic with
 * auth=none, acts on any key of its tenant and becomes the producer_sub of what it writes. The owner is the
 * locked row's producer_sub (bridge_lock_v2), so a row seen cannot change before the commit; a key seen absent
 * can be staged meanwhile by another bridge, which bridge_apply_v4 checks and answers with 40001 (the batch is
 * retried). PRICE: a producer whose token's sub changes (a renamed service) can no longer touch its timers, only
 * an admin token can.
 */
public final class BatchApplier {

    private static final String LOCK = SqlFile.load(BatchApplier.class, "lock.sql");
    private static final String APPLY = SqlFile.load(BatchApplier.class, "apply.sql");
    private static final String PENDING = SqlFile.load(BatchApplier.class, "pending.sql");
    private static final String SERIES = SqlFile.load(BatchApplier.class, "series.sql");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final DataSource dataSource;
    private final String groupId;
    private final Limits limits;
    private final QueueEncryption encryption;
    private final PendingEstimates estimates;
    private final Telemetry telemetry;

    /**
     * How the apply stores what it writes and what it lets a tenant hold.
     *
     * @param wakeWithin         NOTIFY queen_timers_wake at commit when a written timer is due within this
     * @param zstdThreshold      payloads longer than this many bytes are stored zstd-compressed
     * @param tenantMaxPending   tenant.max.pending: a schedule of a new key for a tenant holding this many is rejected tenant_quota
     * @param tenantMaxRecurring tenant.max.recurring: a command that would make a key a series for a tenant holding this many is
     *                           rejected recurring_quota
     */
    public record Limits(Duration wakeWithin, int zstdThreshold, int tenantMaxPending, int tenantMaxRecurring) {
        /** The shipped quotas ({@link BridgeSettings#DEFAULT_TENANT_MAX_PENDING}, {@link BridgeSettings#DEFAULT_TENANT_MAX_RECURRING}). */
        public static Limits defaults(Duration wakeWithin, int zstdThreshold) {
            return new Limits(wakeWithin, zstdThreshold, BridgeSettings.DEFAULT_TENANT_MAX_PENDING, BridgeSettings.DEFAULT_TENANT_MAX_RECURRING);
        }
    }

    /** With the shipped quotas, no queue sealed, no spans. */
    public BatchApplier(DataSource dataSource, String groupId, Duration wakeWithin, int zstdThreshold) {
        this(dataSource, groupId, Limits.defaults(wakeWithin, zstdThreshold), QueueEncryption.none(), Telemetry.off());
    }

    /**
     * @param encryption which destination queues get their payloads sealed (docs/security.md#payload-encryption)
     * @param telemetry  where the span of each record applied goes (docs/tracing.md#tracing); {@link Telemetry#off()} makes none
     */
    public BatchApplier(DataSource dataSource, String groupId, Limits limits, QueueEncryption encryption, Telemetry telemetry) {
        this(dataSource, groupId, limits, encryption, telemetry, System::nanoTime);
    }

    /** @param nanoTime the clock the pending estimates age by ({@link PendingEstimates}) */
    BatchApplier(DataSource dataSource, String groupId, Limits limits, QueueEncryption encryption, Telemetry telemetry,
                 LongSupplier nanoTime) {
        this.telemetry = telemetry;
        this.dataSource = dataSource;
        this.limits = limits;
        this.estimates = new PendingEstimates(limits.tenantMaxPending(), nanoTime);
        this.groupId = groupId;
        this.encryption = encryption;
    }

    private record TimerId(UUID tenant, String queue, String timerKey) {}

    private enum State { ABSENT, PENDING, IN_HANDS }

    /** A timer's state while the batch is folded: where it started and where it ends. */
    private static final class Fold {
        final boolean existed;
        State state;
        UUID messageId;
        Command command;
        String producerSub;
        /** A cancel met the timer in a sweeper's hands: too late for that occurrence, but a series ends with it. */
        boolean stopSeries;
        /** The staged row's producer_sub as locked (null when not staged, or staged with none). */
        final String stagedOwner;
        /** The owner now, as the batch folds: the staged one, then whoever wrote it last in this batch (null when absent). */
        String owner;
        /** A command from a token ({@code OWNER}) was accepted on the staged state: bridge_apply_v4 re-checks that state. */
        boolean ownerChecked;
        /** The key holds a rule (a recurring series) in the state folded so far; known for the tenants counted by series(). */
        boolean series;

        Fold(boolean existed, State state, UUID messageId, String stagedOwner) {
            this.existed = existed;
            this.state = state;
            this.messageId = messageId;
            this.stagedOwner = stagedOwner;
            this.owner = stagedOwner;
        }

        /** The guard bridge_apply_v4 checks against the table: did the key exist, and whose was it, when the fold read it. */
        Boolean ownerStaged() {
            return ownerChecked ? existed : null;
        }

        String ownerSub() {
            return ownerChecked ? stagedOwner : null;
        }
    }

    private record Existing(UUID messageId, boolean inHands, String producerSub) {}

    /** @param records the batch in poll order; @param offsets one entry per Kafka partition in it */
    public Outcome apply(List<Incoming> records, List<OffsetAdvance> offsets) throws SQLException {
        // a span's times are this host's wall clock, as every span's of this host is; the batch decides nothing by them
        // (back-dating, too_late and due-ness are the database's now(), R__bridge_apply.sql)
        Instant start = telemetry.enabled() ? Instant.now() : null;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                Outcome out = applyIn(c, records, offsets);
                if (out instanceof Outcome.Applied applied) {
                    c.commit();
                    if (start != null) {
                        spans(records, applied.decisions(), start);
                    }
                } else {
                    c.rollback();
                }
                return out;
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(c);
                throw e;
            }
        }
    }

    private Outcome applyIn(Connection c, List<Incoming> polled, List<OffsetAdvance> offsets) throws SQLException {
        Set<QueueRef> sealed = sealedQueues(c, polled);
        List<Incoming> records = encryption.canSeal() ? polled : refuseUnsealable(polled, sealed);
        Map<TimerId, Fold> folds = new LinkedHashMap<>();
        for (Incoming in : records) {
            if (in.parsed() instanceof Command cmd) {
                folds.putIfAbsent(new TimerId(in.tenant(), cmd.queue(), cmd.timerKey()), null);
            }
        }
        Map<TimerId, Existing> existing = lock(c, folds.keySet());
        folds.replaceAll((id, none) -> {
            Existing e = existing.get(id);
            return e == null ? new Fold(false, State.ABSENT, null, null)
                    : new Fold(true, e.inHands() ? State.IN_HANDS : State.PENDING, e.messageId(), e.producerSub());
        });

        Map<UUID, long[]> pending = pending(c, records, existing);
        Map<UUID, long[]> series = series(c, records, folds);

        Rows rows = new Rows(records.size());
        List<Decision> decisions = new ArrayList<>(records.size());
        for (Incoming in : records) {
            if (in.parsed() instanceof Command cmd) {
                decisions.add(fold(in, cmd, folds.get(new TimerId(in.tenant(), cmd.queue(), cmd.timerKey())), rows,
                        pending.get(in.tenant()), series.get(in.tenant())));
            } else {
                Rejection r = (Rejection) in.parsed();
                decisions.add(rows.event(in, in.tenant(), r.kafkaKey(), Verdict.REJECTED, rejected(in, r), r));
            }
        }
        pending.forEach((tenant, n) -> estimates.folded(tenant, n[0]));
        folds.forEach((id, f) -> {
            if (f.state == State.PENDING && f.command != null) {   // no command: every one was rejected (not_owner), the row stays
                byte[] stored = sealed.contains(new QueueRef(id.tenant(), id.queue())) ? encryption.seal(f.command.schedule().payload()) : null;
                rows.upsert(id.tenant(), f.command, f.messageId, f.producerSub, stored, limits.zstdThreshold(), f);
            } else if (f.state == State.ABSENT && f.existed) {
                rows.delete(id.tenant(), id.queue(), id.timerKey(), false, f);
            } else if (f.state == State.IN_HANDS && f.stopSeries) {
                rows.delete(id.tenant(), id.queue(), id.timerKey(), true, f);
            }
        });
        int fenced = write(c, rows, offsets);
        return fenced == 0 ? new Outcome.Applied(decisions) : new Outcome.Fenced(fenced);
    }

    /**
     * One span per record of a committed batch (docs/tracing.md#tracing): {@code queen-timers apply}, a CONSUMER span whose
     * parent is the record's traceparent (the producer's span: flags and tracestate as sent) or none, from the batch's
     * start to its commit, with the verdict. Made after the commit, so a batch retried or fenced makes none: each span
     * is a verdict that stands. Records and decisions are in the same (Kafka) order.
     */
    private void spans(List<Incoming> records, List<Decision> decisions, Instant start) {
        Instant end = Instant.now();
        for (int i = 0; i < records.size(); i++) {
            Incoming in = records.get(i);
            Decision d = decisions.get(i);
            SpanBuilder b = telemetry.tracer().spanBuilder("queen-timers apply").setSpanKind(SpanKind.CONSUMER).setStartTimestamp(start)
                    .setAttribute("messaging.system", "kafka")
                    .setAttribute("messaging.operation.type", "process")
                    .setAttribute("messaging.destination.name", in.source().topic())
                    .setAttribute("messaging.destination.partition.id", String.valueOf(in.source().partition()))
                    .setAttribute("messaging.kafka.offset", in.source().offset())
                    .setAttribute("queen.timers.tenant", in.tenant().toString())
                    .setAttribute("queen.timers.verdict", d.verdict().wireName());
            if (d.reason() != null) {
                b.setAttribute("queen.timers.reject_reason", d.reason().wireName());
            }
            if (in.parsed() instanceof Command cmd) {
                b.setParent(Telemetry.parent(cmd.trace()))
                        .setAttribute("queen.timers.queue", cmd.queue())
                        .setAttribute("queen.timers.timer_key", cmd.timerKey())
                        .setAttribute("queen.timers.op", cmd.op().wireName());
            } else {
                b.setNoParent();
            }
            b.startSpan().end(end);
        }
    }

    /** The destination queues of the batch's schedules whose payloads must be sealed (a plain read of queen.queues). */
    private Set<QueueRef> sealedQueues(Connection c, List<Incoming> records) throws SQLException {
        Set<QueueRef> queues = new LinkedHashSet<>();
        for (Incoming in : records) {
            if (in.parsed() instanceof Command cmd && cmd.op().upserts()) {
                queues.add(new QueueRef(in.tenant(), cmd.queue()));
            }
        }
        return encryption.required(c, queues);
    }

    /** Without a key, a schedule whose queue needs encryption is rejected: never stored in clear. */
    private static List<Incoming> refuseUnsealable(List<Incoming> records, Set<QueueRef> sealed) {
        if (sealed.isEmpty()) {
            return records;
        }
        List<Incoming> out = new ArrayList<>(records.size());
        for (Incoming in : records) {
            if (in.parsed() instanceof Command cmd && cmd.op().upserts() && sealed.contains(new QueueRef(in.tenant(), cmd.queue()))) {
                out.add(new Incoming(in.source(), in.tenant(), in.producerSub(), new Rejection(RejectReason.ENCRYPTION_UNAVAILABLE,
                        "queue " + cmd.queue() + " requires encryption (queen.queues.encryption_enabled or encryption.queues) and "
                                + "encryption.key is not set: the payload is never stored in clear", cmd.kafkaKey())));
            } else {
                out.add(in);
            }
        }
        return out;
    }

    /**
     * The pending timers of each tenant that schedules a key not staged yet in this batch, counted (up to
     * tenant.max.pending) after the lock or, far from the cap, this bridge's estimate ({@link PendingEstimates}),
     * and kept current by the fold. A tenant whose batch only touches staged keys is not counted: nothing it does
     * here can make it hold more.
     */
    private Map<UUID, long[]> pending(Connection c, List<Incoming> records, Map<TimerId, Existing> existing) throws SQLException {
        Map<UUID, Integer> schedules = new HashMap<>();
        for (Incoming in : records) {
            if (in.parsed() instanceof Command cmd && cmd.op().upserts()
                    && !existing.containsKey(new TimerId(in.tenant(), cmd.queue(), cmd.timerKey()))) {
                schedules.merge(in.tenant(), 1, Integer::sum);
            }
        }
        Map<UUID, long[]> out = new HashMap<>();
        Set<UUID> toCount = new LinkedHashSet<>();
        for (Map.Entry<UUID, Integer> e : schedules.entrySet()) {
            long estimate = estimates.reusable(e.getKey(), e.getValue());
            if (estimate >= 0) {
                out.put(e.getKey(), new long[] {estimate});
            } else {
                toCount.add(e.getKey());
            }
        }
        if (toCount.isEmpty()) {
            return out;
        }
        try (PreparedStatement st = c.prepareStatement(PENDING)) {
            st.setArray(1, c.createArrayOf("uuid", toCount.toArray()));
            st.setInt(2, limits.tenantMaxPending());
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    UUID tenant = rs.getObject("tenant_id", UUID.class);
                    out.put(tenant, new long[] {rs.getLong("pending")});
                    estimates.counted(tenant, rs.getLong("pending"));
                }
            }
        }
        return out;
    }

    /**
     * The recurring series of each tenant whose batch carries a rule (a schedule or reschedule with cron or every), counted
     * (up to tenant.max.recurring) after the lock, exactly, in this transaction; and, on each of those tenants' folds, whether
     * the key holds a rule now. A tenant whose batch carries no rule is not counted: nothing it does here can add a series.
     */
    private Map<UUID, long[]> series(Connection c, List<Incoming> records, Map<TimerId, Fold> folds) throws SQLException {
        Set<UUID> tenants = new LinkedHashSet<>();
        for (Incoming in : records) {
            if (in.parsed() instanceof Command cmd && cmd.op().upserts() && cmd.recurrence() != null) {
                tenants.add(in.tenant());
            }
        }
        Map<UUID, long[]> out = new HashMap<>();
        if (tenants.isEmpty()) {
            return out;
        }
        List<UUID> t = new ArrayList<>();
        List<String> q = new ArrayList<>();
        List<String> k = new ArrayList<>();
        for (TimerId id : folds.keySet()) {
            if (tenants.contains(id.tenant())) {
                t.add(id.tenant());
                q.add(id.queue());
                k.add(id.timerKey());
            }
        }
        try (PreparedStatement st = c.prepareStatement(SERIES)) {
            st.setArray(1, c.createArrayOf("uuid", t.toArray()));
            st.setArray(2, c.createArrayOf("text", q.toArray()));
            st.setArray(3, c.createArrayOf("text", k.toArray()));
            st.setInt(4, limits.tenantMaxRecurring());
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    UUID tenant = rs.getObject("tenant_id", UUID.class);
                    if (rs.getString("queue") == null) {
                        out.put(tenant, new long[] {rs.getLong("series")});
                    } else {
                        Fold f = folds.get(new TimerId(tenant, rs.getString("queue"), rs.getString("timer_key")));
                        if (f != null) {
                            f.series = true;
                        }
                    }
                }
            }
        }
        return out;
    }

    /**
     * One command against its timer's state so far: the verdict, and the state it leaves.
     *
     * @param pending the tenant's pending timers so far in this batch, or null when it was not counted (it schedules no new key)
     * @param series  the tenant's recurring series so far in this batch, or null when it was not counted (its batch carries no rule)
     */
    private Decision fold(Incoming in, Command cmd, Fold f, Rows rows, long[] pending, long[] series) {
        ObjectNode ev = base(in, cmd);
        Verdict v;
        if (f.state == State.ABSENT && cmd.op().upserts() && pending != null && pending[0] >= limits.tenantMaxPending()) {
            Rejection r = new Rejection(RejectReason.TENANT_QUOTA, "tenant " + in.tenant() + " already holds " + pending[0]
                    + " pending timers (tenant.max.pending = " + limits.tenantMaxPending() + "): a new key is refused; a reschedule or cancel"
                    + " of a pending one passes", cmd.kafkaKey());
            return rows.event(in, in.tenant(), cmd.kafkaKey(), Verdict.REJECTED, rejected(in, r), r);
        }
        if (in.authority() == Incoming.Authority.OWNER && f.state != State.ABSENT) {
            if (!java.util.Objects.equals(f.owner, in.producerSub())) {
                // the owner is not named: the event goes to whoever reads the audit topic, the sender included
                Rejection r = new Rejection(RejectReason.NOT_OWNER, "timer " + cmd.queue() + "/" + cmd.timerKey() + " was scheduled by"
                        + " another producer: only its sub, or a token with the admin claim (auth.admin.claim), may " + cmd.op().wireName()
                        + " it; it is unchanged", cmd.kafkaKey());
                return rows.event(in, in.tenant(), cmd.kafkaKey(), Verdict.REJECTED, rejected(in, r), r);
            }
        }
        if (f.state != State.IN_HANDS && cmd.op().upserts() && cmd.recurrence() != null && !f.series && series != null
                && series[0] >= limits.tenantMaxRecurring()) {
            Rejection r = new Rejection(RejectReason.RECURRING_QUOTA, "tenant " + in.tenant() + " already holds " + series[0]
                    + " recurring series (tenant.max.recurring = " + limits.tenantMaxRecurring() + "): a new series is refused; a reschedule"
                    + " of an existing one, or a cancel, passes", cmd.kafkaKey());
            return rows.event(in, in.tenant(), cmd.kafkaKey(), Verdict.REJECTED, rejected(in, r), r);
        }
        if (series != null && f.state != State.IN_HANDS) {
            // the count follows the fold: a rule makes the key a series, a one-shot time or a cancel of a pending key ends one
            boolean after = cmd.op().upserts() ? cmd.recurrence() != null : f.state == State.PENDING ? false : f.series;
            series[0] += (after ? 1 : 0) - (f.series ? 1 : 0);
            f.series = after;
        }
        if (in.authority() == Incoming.Authority.OWNER) {
            f.ownerChecked = true;
        }
        if (f.state == State.IN_HANDS) {
            v = Verdict.TOO_LATE;
            ev.put("messageId", f.messageId.toString());
            if (cmd.op() == Op.CANCEL) {
                f.stopSeries = true;   // docs/recurring.md: the occurrence in hands goes out, no successor follows
            }
        } else if (cmd.op().upserts()) {
            v = f.state == State.ABSENT ? Verdict.SCHEDULED : Verdict.RESCHEDULED;
            if (f.state == State.ABSENT) {
                f.messageId = UuidV7.next();
                if (pending != null) {
                    pending[0]++;
                }
            }
            f.state = State.PENDING;
            f.command = cmd;
            f.producerSub = in.producerSub();
            f.owner = in.producerSub();
            ev.put("partition", cmd.partition()).put("txn", cmd.schedule().txn()).put("messageId", f.messageId.toString())
                    .put("deliverAt", cmd.schedule().deliverAt().toString());
            if (cmd.recurrence() != null) {
                ev.set("recurrence", Rows.recurrence(cmd)); // the rule as stored; deliverAt is its first occurrence
            }
        } else if (f.state == State.PENDING) {
            v = Verdict.CANCELLED;
            ev.put("messageId", f.messageId.toString());
            if (pending != null) {
                pending[0]--;
            }
            f.state = State.ABSENT;
            f.command = null;
            f.messageId = null;
            f.owner = null;
        } else {
            v = Verdict.ABSENT;
        }
        return rows.event(in, in.tenant(), cmd.kafkaKey(), v, ev, null);
    }

    private static ObjectNode base(Incoming in, Command cmd) {
        ObjectNode ev = JSON.createObjectNode();
        ev.put("queue", cmd.queue()).put("timerKey", cmd.timerKey()).put("op", cmd.op().wireName());
        if (in.producerSub() != null) {
            ev.put("producerSub", in.producerSub()); // who sent this command (a token's sub, or the topic's fixed sub)
        }
        if (cmd.trace() != null) { // the command's own trace (its W3C context, flags and tracestate included): its verdict joins the producer's trace
            ev.put("traceId", cmd.trace().traceId()).put("spanId", cmd.trace().spanId()).put("traceFlags", cmd.trace().flags());
            if (cmd.trace().traceState() != null) {
                ev.put("traceState", cmd.trace().traceState());
            }
        }
        source(ev, in.source());
        return ev;
    }

    private static ObjectNode rejected(Incoming in, Rejection r) {
        ObjectNode ev = JSON.createObjectNode();
        ev.put("reason", r.reason().wireName()).put("error", r.detail());
        source(ev, in.source());
        return ev;
    }

    private static void source(ObjectNode ev, Source s) {
        ev.putObject("source").put("topic", s.topic()).put("partition", s.partition()).put("offset", s.offset());
    }

    private Map<TimerId, Existing> lock(Connection c, Set<TimerId> ids) throws SQLException {
        Map<TimerId, Existing> out = new HashMap<>();
        if (ids.isEmpty()) {
            return out;
        }
        List<UUID> tenants = new ArrayList<>(ids.size());
        List<String> queues = new ArrayList<>(ids.size());
        List<String> keys = new ArrayList<>(ids.size());
        for (TimerId id : ids) {
            tenants.add(id.tenant());
            queues.add(id.queue());
            keys.add(id.timerKey());
        }
        try (PreparedStatement st = c.prepareStatement(LOCK)) {
            st.setArray(1, c.createArrayOf("uuid", tenants.toArray()));
            st.setArray(2, c.createArrayOf("text", queues.toArray()));
            st.setArray(3, c.createArrayOf("text", keys.toArray()));
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.put(new TimerId(rs.getObject("tenant_id", UUID.class), rs.getString("queue"), rs.getString("timer_key")),
                            new Existing(rs.getObject("message_id", UUID.class), rs.getBoolean("in_hands"), rs.getString("producer_sub")));
                }
            }
        }
        return out;
    }

    private int write(Connection c, Rows r, List<OffsetAdvance> offsets) throws SQLException {
        List<OffsetRow> offsetRows = new ArrayList<>(offsets.size());
        for (OffsetAdvance o : offsets) {
            offsetRows.add(new OffsetRow(o.topic(), o.partition(), o.expected(), o.next()));
        }
        try (PreparedStatement st = c.prepareStatement(APPLY)) {
            st.setString(1, groupId);
            st.setString(2, JsonRows.write(offsetRows));
            st.setString(3, JsonRows.write(r.upserts));
            st.setString(4, JsonRows.write(r.deletes));
            st.setString(5, JsonRows.write(r.events));
            st.setString(6, limits.wakeWithin().toMillis() + " milliseconds");
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getInt("fenced");
            }
        }
    }

    private static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the connection is broken; the server rolls back on its own
        }
    }

    // The rows of one bridge_apply_v4 call: each record is one row, its fields the row's named
    // fields (JsonRows writes them in snake_case, every field present, null where there is no value).

    /** p_offsets: a Kafka partition's check-and-set; {@code expected} null when none is stored yet. */
    private record OffsetRow(String topic, int partition, Long expected, long next) {}

    /**
     * p_upserts: a timer's final state. {@code payload} as stored (sealed and/or zstd); {@code payloadBytes} its length before
     * compression, what the sweeper will hold once it decompresses it (the claim's byte bound counts it);
     * {@code traceContext} TraceParent#bytes (25 bytes and the tracestate) or null.
     */
    private record UpsertRow(UUID tenantId, String queue, String timerKey, String partition, long deliverAtMs, String txn,
                             UUID messageId, byte[] payload, boolean payloadZstd, int payloadBytes, boolean encrypted,
                             String producerSub, byte[] traceContext, JsonNode recurrence, Boolean ownerStaged, String ownerSub) {}

    /**
     * p_deletes: a timer that existed and ends the batch absent. {@code ownerStaged}/{@code ownerSub} (both rows): null, or
     * the staged state an owner check was decided on, which bridge_apply_v4 re-checks against the table.
     */
    private record DeleteRow(UUID tenantId, String queue, String timerKey, boolean stopSeries, Boolean ownerStaged, String ownerSub) {}

    /** p_events: one outbox row per record, in Kafka order. */
    private record EventRow(UUID tenantId, String kafkaKey, String type, ObjectNode event) {}

    /** The rows of one bridge_apply_v4 call. */
    private static final class Rows {
        final List<UpsertRow> upserts = new ArrayList<>();
        final List<DeleteRow> deletes = new ArrayList<>();
        final List<EventRow> events;

        Rows(int records) {
            events = new ArrayList<>(records);
        }

        /** @param sealed the payload's encryption envelope, or null to store the payload as it is */
        void upsert(UUID tenant, Command cmd, UUID messageId, String sub, byte[] sealed, int zstdThreshold, Fold f) {
            byte[] payload = sealed != null ? sealed : cmd.schedule().payload();
            boolean zstd = payload.length > zstdThreshold;
            upserts.add(new UpsertRow(tenant, cmd.queue(), cmd.timerKey(), cmd.partition(), cmd.schedule().deliverAt().toEpochMilli(),
                    cmd.schedule().txn(), messageId, zstd ? Compression.compress(payload) : payload, zstd, payload.length, sealed != null, sub,
                    cmd.trace() == null ? null : cmd.trace().bytes(), recurrence(cmd), f.ownerStaged(), f.ownerSub()));
        }

        /** A recurring timer's rule as queen.log_timers.recurrence stores it, with its first occurrence's number. */
        static JsonNode recurrence(Command cmd) {
            if (cmd.recurrence() == null) {
                return null;
            }
            try {
                return JSON.readTree(cmd.recurrence().toJson(1));
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }

        /** @param stopSeries not a delete: the timer is in a sweeper's hands; a recurring one is to have no successor */
        void delete(UUID tenant, String queue, String key, boolean stopSeries, Fold f) {
            deletes.add(new DeleteRow(tenant, queue, key, stopSeries, f.ownerStaged(), f.ownerSub()));
        }

        Decision event(Incoming in, UUID tenant, String kafkaKey, Verdict v, ObjectNode ev, Rejection r) {
            events.add(new EventRow(tenant, kafkaKey, v.wireName(), ev));
            return new Decision(in.source(), v, r == null ? null : r.reason());
        }
    }
}
