package io.queen.timers.sweeper;

import static io.queen.timers.core.config.ConfigDef.Type.BOOLEAN;
import static io.queen.timers.core.config.ConfigDef.Type.DURATION;
import static io.queen.timers.core.config.ConfigDef.Type.INT;
import static io.queen.timers.core.config.ConfigDef.between;
import static io.queen.timers.core.config.ConfigDef.durationBetween;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.HealthSettings;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.telemetry.TelemetrySettings;
import io.queen.timers.relay.AuditSettings;
import java.time.Duration;

/**
 * The sweeper's settings (docs/configuration.md#sweeper-settings; docs/decisions.md#claim-size-and-workers-come-from-firebench), on top of
 * {@link CommonSettings} and the audit relay's
 * {@link AuditSettings} (the sweeper runs the relay too). Every default is a number
 * to start from, not a measured one: the soak replaces them. Environment names are derived
 * ({@code QUEEN_} + upper-case key, '.' as '_'), e.g. {@code QUEEN_SWEEPER_BATCH_SIZE}. The sweeper's own keys are
 * grouped by what they govern ({@link Claim}, {@link Retry}, {@link Loops}, {@link Cleanup}), so a component takes the
 * group it reads and a caller names what it passes ({@code settings.claim().lease()}).
 */
public record SweeperSettings(
        Claim claim,
        Retry retry,
        Loops loops,
        Cleanup cleanup,
        CommonSettings common,
        AuditSettings audit,
        TelemetrySettings telemetry) {

    /**
     * What one claim takes and how long a cycle keeps claiming.
     *
     * @param batchSize            {@link #BATCH_SIZE}
     * @param lease                {@link #LEASE}
     * @param cycleClaimMax        {@link #CYCLE_CLAIM_MAX}
     * @param perTenantPerShard    {@link #PER_TENANT_PER_SHARD}
     * @param tenantFiresPerSecond {@link #TENANT_FIRES_PER_SECOND}
     * @param maxFireBytes         {@link #MAX_FIRE_BYTES}
     */
    public record Claim(int batchSize, Duration lease, Duration cycleClaimMax, int perTenantPerShard, int tenantFiresPerSecond,
                        int maxFireBytes) {}

    /**
     * What a failed fire costs a timer, and when a recurring series gives up.
     *
     * @param maxAttempts                        {@link #MAX_ATTEMPTS}
     * @param backoffBase                        {@link #BACKOFF_BASE}
     * @param backoffMax                         {@link #BACKOFF_MAX}
     * @param transientBackoff                   {@link #TRANSIENT_BACKOFF}
     * @param recurringMaxConsecutiveDeadLetters {@link #RECURRING_MAX_CONSECUTIVE_DEAD_LETTERS}
     */
    public record Retry(int maxAttempts, Duration backoffBase, Duration backoffMax, Duration transientBackoff,
                        int recurringMaxConsecutiveDeadLetters) {
        public Retry {
            if (backoffBase.compareTo(backoffMax) > 0) {
                throw new ConfigException("setting " + BACKOFF_BASE + " = " + backoffBase + " must not exceed " + BACKOFF_MAX + " = " + backoffMax);
            }
        }
    }

    /**
     * The claim-and-fire loops: how many, how they sleep, what the probe counts, and how long one of the pool's statements
     * may run or wait for a lock (the loops run most of them; the cleanup and the relay share the pool).
     *
     * @param workers          {@link #WORKERS}
     * @param sleepMin         {@link #SLEEP_MIN}
     * @param sleepNear        {@link #SLEEP_NEAR}
     * @param idleMax          {@link #IDLE_MAX}
     * @param dueCap           {@link #DUE_CAP}
     * @param statementTimeout {@link #STATEMENT_TIMEOUT}
     * @param lockTimeout      {@link #LOCK_TIMEOUT}
     */
    public record Loops(int workers, Duration sleepMin, Duration sleepNear, Duration idleMax, int dueCap, Duration statementTimeout,
                        Duration lockTimeout) {
        public Loops {
            if (sleepMin.compareTo(sleepNear) > 0 || sleepNear.compareTo(idleMax) > 0) {
                throw new ConfigException("settings must satisfy " + SLEEP_MIN + " <= " + SLEEP_NEAR + " <= " + IDLE_MAX
                        + ", got " + sleepMin + ", " + sleepNear + ", " + idleMax);
            }
        }
    }

    /**
     * The partition cleanup.
     *
     * @param enabled  {@link #CLEANUP_ENABLED}
     * @param interval {@link #CLEANUP_INTERVAL}
     * @param idle     {@link #CLEANUP_IDLE}
     * @param batch    {@link #CLEANUP_BATCH}
     */
    public record Cleanup(boolean enabled, Duration interval, Duration idle, int batch) {}

    public static final String BATCH_SIZE = "sweeper.batch.size";
    public static final String LEASE = "sweeper.lease";
    public static final String CYCLE_CLAIM_MAX = "sweeper.cycle.claim.max";
    public static final String PER_TENANT_PER_SHARD = "sweeper.tenant.per.shard";
    public static final String TENANT_FIRES_PER_SECOND = "sweeper.tenant.fires.per.second";
    public static final String MAX_ATTEMPTS = "sweeper.max.attempts";
    public static final String MAX_FIRE_BYTES = "sweeper.max.fire.bytes";
    public static final String BACKOFF_BASE = "sweeper.backoff.base";
    public static final String BACKOFF_MAX = "sweeper.backoff.max";
    public static final String TRANSIENT_BACKOFF = "sweeper.transient.backoff";
    public static final String SLEEP_MIN = "sweeper.sleep.min";
    public static final String SLEEP_NEAR = "sweeper.sleep.near";
    public static final String IDLE_MAX = "sweeper.idle.max";
    public static final String WORKERS = "sweeper.workers";
    public static final String DUE_CAP = "sweeper.due.cap";
    public static final String CLEANUP_ENABLED = "cleanup.enabled";
    public static final String CLEANUP_INTERVAL = "cleanup.interval";
    public static final String CLEANUP_IDLE = "cleanup.idle";
    public static final String CLEANUP_BATCH = "cleanup.batch";
    public static final String STATEMENT_TIMEOUT = "sweeper.statement.timeout";
    public static final String LOCK_TIMEOUT = "sweeper.lock.timeout";
    public static final String RECURRING_MAX_CONSECUTIVE_DEAD_LETTERS = "recurring.max.consecutive.dead.letters";

    /**
     * What one loop really holds for a cycle of {@code sweeper.max.fire.bytes} decompressed payload bytes: the
     * payloads decompressed, the packed segments, the bytes sent to the driver, with the claim's stored rows and
     * frames around them (docs/guarantees.md#bounded-by-real-bytes). 4 is the measured order, stated as the price.
     */
    public static final int HELD_PER_FIRE_BYTE = 4;

    /**
     * Refuses to start when every loop's cycle cannot fit in half the heap (the other half is the relay, the
     * driver, the JVM): a bound that the heap cannot hold is no bound. Enforced, not advised.
     */
    public void checkFitsHeap(long maxHeapBytes) {
        long need = (long) loops.workers() * HELD_PER_FIRE_BYTE * claim.maxFireBytes();
        if (need > maxHeapBytes / 2) {
            throw new ConfigException("settings " + WORKERS + " = " + loops.workers() + " and " + MAX_FIRE_BYTES + " = " + claim.maxFireBytes()
                    + " need about " + (need >> 20) + " MiB of heap (" + HELD_PER_FIRE_BYTE + " x fire bytes per loop), more than half of"
                    + " this JVM's " + (maxHeapBytes >> 20) + " MiB: lower them or raise -Xmx");
        }
    }

    /**
     * Refuses to start with a setting the database refuses at every call (the owner's bounds, {@link OwnerBounds}),
     * naming each such setting and the owner's column: a sweeper that started would claim and then fail to fail,
     * dead-letter or clean up anything. Enforced, not advised.
     */
    public void checkOwnerBounds(OwnerBounds b) {
        java.util.List<String> beyond = new java.util.ArrayList<>();
        if (claim.lease().compareTo(b.maxLease()) > 0) {
            beyond.add(LEASE + " = " + claim.lease() + " exceeds max_lease = " + b.maxLease());
        }
        if (cleanup.enabled() && cleanup.idle().compareTo(b.minCleanupIdle()) < 0) {
            beyond.add(CLEANUP_IDLE + " = " + cleanup.idle() + " is below min_cleanup_idle = " + b.minCleanupIdle());
        }
        if (b.bindsCaller()) {
            if (retry.transientBackoff().compareTo(b.maxTransientBackoff()) > 0) {
                beyond.add(TRANSIENT_BACKOFF + " = " + retry.transientBackoff() + " exceeds max_transient_backoff = " + b.maxTransientBackoff());
            }
            if (retry.backoffMax().compareTo(b.maxBackoff()) > 0) {   // the base is at most the max (checked by Retry)
                beyond.add(BACKOFF_MAX + " = " + retry.backoffMax() + " exceeds max_backoff = " + b.maxBackoff());
            }
            if (retry.maxAttempts() < b.minAttempts()) {
                beyond.add(MAX_ATTEMPTS + " = " + retry.maxAttempts() + " is below min_attempts = " + b.minAttempts());
            }
            if (retry.recurringMaxConsecutiveDeadLetters() < b.minDeadLettersInRow()) {
                beyond.add(RECURRING_MAX_CONSECUTIVE_DEAD_LETTERS + " = " + retry.recurringMaxConsecutiveDeadLetters()
                        + " is below min_dead_letters_in_row = " + b.minDeadLettersInRow());
            }
        }
        if (!beyond.isEmpty()) {
            throw new ConfigException("setting " + String.join("; setting ", beyond) + " (queen.timer_settings, the schema owner's"
                    + " bounds, which the database enforces at every call of this login): change the setting, or as the owner"
                    + " UPDATE queen.timer_settings (docs/schema-and-roles.md#database-roles)");
        }
    }

    /**
     * The most one timer may decompress to when it fires alone: what half the heap leaves after the other loops'
     * cycles, divided by {@link #HELD_PER_FIRE_BYTE}, at least a fire's bound, at most the frame format's limit. A
     * larger payload fails (then dead-letters) instead of exhausting the heap.
     */
    public int maxTimerBytes(long maxHeapBytes) {
        long free = maxHeapBytes / 2 - (long) (loops.workers() - 1) * HELD_PER_FIRE_BYTE * claim.maxFireBytes();
        return (int) Math.min(io.queen.timers.log.codec.Frame.MAX_PAYLOAD_BYTES, Math.max(claim.maxFireBytes(), free / HELD_PER_FIRE_BYTE));
    }

    /** The keys the sweeper process understands: the common ones plus its own. */
    public static ConfigDef definition() {
        return new ConfigDef()
                .include(CommonSettings.definition())
                .include(AuditSettings.definition())
                .define(BATCH_SIZE, INT, "512", between(1, 10_000),
                        "Most timers one claim takes. Each of the 64 shards gives at most max(ceil(batch/64), 8) per claim;"
                                + " 512 = 64 x 8, so a claim keeps every row it locks (the first default, 200, locked up to 512 to"
                                + " keep 200), and fires faster than 200 did (docs/configuration.md, which defaults are measured).")
                .define(LEASE, DURATION, "30s", durationBetween(Duration.ofSeconds(1), Duration.ofHours(1)),
                        "How long a claim holds its timers. A sweeper that dies loses them for this long; claiming stops "
                                + "at half of it in one cycle, so a batch is fired well inside its lease.")
                .define(CYCLE_CLAIM_MAX, DURATION, "50ms", durationBetween(Duration.ofMillis(1), Duration.ofHours(1)),
                        "How long one cycle keeps claiming (while claims come back full) before it fires what it holds; it also"
                                + " stops at sweeper.max.fire.bytes and at half the lease. Bounds how long a timer claimed first waits"
                                + " for the others of its cycle under a backlog: a quiet tenant beside another's flood is fired within"
                                + " about one cycle (docs/configuration.md, which defaults are measured). Longer packs larger segments per fire under a backlog.")
                .define(PER_TENANT_PER_SHARD, INT, "8", between(1, 10_000),
                        "Most timers of one tenant per shard per claim (round-robin over tenants).")
                .define(TENANT_FIRES_PER_SECOND, INT, "1000", between(0, 1_000_000),
                        "The per-tenant fire budget: most timers of one tenant this sweeper process claims per second while another"
                                + " tenant has a timer due within sweeper.sleep.near (0: no budget). A token bucket per tenant, shared by"
                                + " the process's loops, holding a tenth of a second of it (at least one); a claim takes at most a"
                                + " tenant's tokens, so cycles stay short and another tenant's due timer waits for a short cycle, not for"
                                + " a flood's. What a held tenant leaves stays due and is claimed later, oldest first: its lateness is its"
                                + " own (a series' catchUp decides what its late occurrences become). A tenant alone is never held. Per"
                                + " process: N sweepers give one tenant up to N times it. On by default, at a sixth of what one 2-core"
                                + " sweeper fires for one tenant alone: a flood of one tenant cannot make another's timers wait for its"
                                + " cycles as shipped. A rate, not a share of what is free: a tenant above it is held while another has"
                                + " work near even when the sweeper has time to spare, so raise it above any tenant's normal rate (and"
                                + " keep it below what one sweeper fires; a third leaves room for the others)"
                                + " (docs/sweeper.md#the-fire-budget).")
                .define(MAX_ATTEMPTS, INT, "5", between(1, 1_000),
                        "Permanent fire failures before a timer is moved to queen.log_dlq.")
                .define(MAX_FIRE_BYTES, INT, String.valueOf(8 * 1024 * 1024), between(64 * 1024, 256 * 1024 * 1024),
                        "Most payload bytes one cycle holds and one fire transaction pushes, counted DECOMPRESSED: the claim counts"
                                + " payload_bytes (the raw length the bridge recorded) + txn + 64 bytes per timer in SQL and stops at this many"
                                + " (a timer larger than it is claimed and fired alone); decompression stops there too;"
                                + " a destination with more is split across fires. Bounds the sweeper's memory: each loop holds about"
                                + " 4x this (decompressed, packed, sent); the sweeper refuses to start when workers x 4 x this exceeds half the heap.")
                .define(BACKOFF_BASE, DURATION, "1s", durationBetween(Duration.ofMillis(10), Duration.ofHours(1)),
                        "Backoff after a permanent failure: min(base * 2^attempts, max).")
                .define(BACKOFF_MAX, DURATION, "60s", durationBetween(Duration.ofMillis(10), Duration.ofDays(1)),
                        "Longest backoff after a permanent failure.")
                .define(TRANSIENT_BACKOFF, DURATION, "1s", durationBetween(Duration.ofMillis(10), Duration.ofMinutes(10)),
                        "Backoff after a transient failure (no attempt spent).")
                .define(SLEEP_MIN, DURATION, "5ms", durationBetween(Duration.ofMillis(1), Duration.ofSeconds(1)),
                        "Shortest sleep between cycles.")
                .define(SLEEP_NEAR, DURATION, "1s", durationBetween(Duration.ofMillis(1), Duration.ofMinutes(1)),
                        "Longest sleep while work is near (the next timer is due within it, or the last cycle found work).")
                .define(IDLE_MAX, DURATION, "30s", durationBetween(Duration.ofMillis(1), Duration.ofHours(1)),
                        "Longest sleep when idle; the idle sleep doubles from sweeper.sleep.near up to this. NOTIFY queen_timers_wake wakes at once.")
                .define(WORKERS, INT, "2", between(1, 64),
                        "Claim-and-fire loops in this process. Each holds one connection at a time; they coordinate only through"
                                + " SKIP LOCKED. 2 overlaps one loop's packing with the other's SQL; more loops than cores"
                                + " contend instead (docs/configuration.md, which defaults are measured).")
                .define(DUE_CAP, INT, "10000", between(1, 10_000_000),
                        "The due gauge counts up to this many visible timers per probe.")
                .define(CLEANUP_ENABLED, BOOLEAN, "true", null,
                        "Delete dead partitions (queen.log_partition_dead_v1) on a slow clock. Switch off when a Queen broker sharing the database does it.")
                .define(CLEANUP_INTERVAL, DURATION, "10m", durationBetween(Duration.ofSeconds(1), Duration.ofDays(1)),
                        "Pause between partition cleanup runs.")
                .define(CLEANUP_IDLE, DURATION, "7d", durationBetween(Duration.ofMinutes(1), Duration.ofDays(3650)),
                        "A partition idle (created and last written) for longer than this, with nothing in it, is dead.")
                .define(CLEANUP_BATCH, INT, "100", between(1, 100_000),
                        "Most partitions one cleanup run deletes.")
                .define(STATEMENT_TIMEOUT, DURATION, "30s", durationBetween(Duration.ofMillis(100), Duration.ofMinutes(30)),
                        "Longest statement of the sweeper's pool (statement_timeout): claim, fire, fail, release, dead-letter, cleanup,"
                                + " relay. A fire of sweeper.max.fire.bytes takes well under a second, so this is also the bound on how long"
                                + " a fire holds timer rows, which bridge.lock.timeout must outlast. A cancelled statement is transient:"
                                + " no attempt spent.")
                .define(LOCK_TIMEOUT, DURATION, "10s", durationBetween(Duration.ofMillis(100), Duration.ofMinutes(30)),
                        "Longest lock wait of the sweeper's pool (lock_timeout). The claim and the fire take timer rows with"
                                + " SKIP LOCKED and never wait for them; what can wait is the fire's provisioning of queue and partition"
                                + " rows (a Queen broker pushing holds them for a moment) and a fail or release behind a bridge batch."
                                + " A timeout is transient: no attempt spent, retried after sweeper.transient.backoff.")
                .define(RECURRING_MAX_CONSECUTIVE_DEAD_LETTERS, INT, "3", between(1, 1_000),
                        "A recurring series ends after this many of its occurrences are dead-lettered in a row (a delivered one"
                                + " resets the run); its last dead_lettered event says ended: dead_letters. Decided in the dead letter's"
                                + " transaction (queen.timer_series_next_v1). 3: each dead letter has already failed sweeper.max.attempts"
                                + " times, so three in a row is a series that cannot be delivered, not a glitch, and it has written three"
                                + " queen.log_dlq rows (up to 3 payloads) instead of one per period for ever.");
    }

    public static SweeperSettings from(Config c) {
        // an idle sweep loop ends a cycle at least every sweeper.idle.max; readiness calls it stuck after health.stall.after
        if (c.duration(IDLE_MAX).compareTo(c.duration(HealthSettings.STALL_AFTER)) >= 0) {
            throw new ConfigException("setting " + IDLE_MAX + " = " + c.duration(IDLE_MAX) + " must be below " + HealthSettings.STALL_AFTER
                    + " = " + c.duration(HealthSettings.STALL_AFTER) + " (an idle loop would read as stuck)");
        }
        return new SweeperSettings(
                new Claim(c.intValue(BATCH_SIZE), c.duration(LEASE), c.duration(CYCLE_CLAIM_MAX), c.intValue(PER_TENANT_PER_SHARD),
                        c.intValue(TENANT_FIRES_PER_SECOND), c.intValue(MAX_FIRE_BYTES)),
                new Retry(c.intValue(MAX_ATTEMPTS), c.duration(BACKOFF_BASE), c.duration(BACKOFF_MAX), c.duration(TRANSIENT_BACKOFF),
                        c.intValue(RECURRING_MAX_CONSECUTIVE_DEAD_LETTERS)),
                new Loops(c.intValue(WORKERS), c.duration(SLEEP_MIN), c.duration(SLEEP_NEAR), c.duration(IDLE_MAX), c.intValue(DUE_CAP),
                        c.duration(STATEMENT_TIMEOUT), c.duration(LOCK_TIMEOUT)),
                new Cleanup(c.bool(CLEANUP_ENABLED), c.duration(CLEANUP_INTERVAL), c.duration(CLEANUP_IDLE), c.intValue(CLEANUP_BATCH)),
                CommonSettings.from(c), AuditSettings.from(c), TelemetrySettings.fromEnvironment("sweeper"));
    }
}
