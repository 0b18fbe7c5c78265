package io.queen.timers.soak.sample;

/**
 * The columns of one sample, in CSV order. Counters of PostgreSQL's statistics views are cumulative
 * since the variant's database was created; "in the interval" values cover the time since the
 * previous sample. CPU is percent of one core over the interval (200 = both cores of this machine).
 */
public enum Column {
    T_S("seconds since the variant's load started"),
    LOAD1("1-minute load average of the machine"),
    PRODUCED("commands handed to the producer so far"),
    TIMERS_LIVE("pg_stat_user_tables.n_live_tup of queen.log_timers"),
    TIMERS_DEAD("n_dead_tup of queen.log_timers (every dead tuple also has an entry in each index until vacuum)"),
    TIMERS_INS("n_tup_ins"),
    TIMERS_UPD("n_tup_upd"),
    TIMERS_HOT_UPD("n_tup_hot_upd"),
    TIMERS_DEL("n_tup_del"),
    TIMERS_VACUUMS("vacuum_count"),
    TIMERS_AUTOVACUUMS("autovacuum_count"),
    OUTBOX_LIVE("n_live_tup of queen.timer_audit_outbox"),
    OUTBOX_DEAD("n_dead_tup of the outbox"),
    OUTBOX_AUTOVACUUMS("autovacuum_count of the outbox"),
    VISIBLE_IDX_SCANS("pg_stat_user_indexes.idx_scan of idx_log_timers_visible"),
    VISIBLE_IDX_TUP_READ("idx_tup_read of idx_log_timers_visible (entries walked, dead ones included)"),
    TIMERS_HEAP_BYTES("pg_relation_size of queen.log_timers"),
    VISIBLE_IDX_BYTES("pg_relation_size of idx_log_timers_visible"),
    PKEY_IDX_BYTES("pg_relation_size of log_timers_pkey"),
    OUTBOX_BYTES("pg_total_relation_size of the outbox"),
    WAL_BYTES("WAL written since the variant started (pg_current_wal_lsn difference)"),
    WAL_BYTES_PER_S("WAL bytes per second in the interval"),
    FIRED_TOTAL("timers fired (sweepers' queen_timers_fired_total{result=fired}, summed)"),
    FIRED_PER_S("timers fired per second in the interval"),
    STALE_TOTAL("segments whose fire came back stale so far (a timer of it lost its lease first; queen_timers_fired_total{result=stale})"),
    DUE("visible unclaimed timers at the last probe (queen_timers_due, summed over sweepers)"),
    PERMANENT_FAILURES("timers whose fire failed permanently so far (poisoned ones, each attempt)"),
    DEAD_LETTERED("timers moved to queen.log_dlq so far"),
    CLAIMS("claim calls in the interval"),
    CLAIM_MEAN_MS("mean claim call in the interval (queen_timers_claim_duration_seconds sum/count)"),
    CLAIM_P50_MS("claim call p50 in the interval, from the delta of the queen_timers_claim_duration_seconds buckets (interpolated inside its bucket)"),
    CLAIM_P99_MS("claim call p99 in the interval, the same way (a rank above the top bucket, 30 s, reads as 30 s)"),
    CLAIM_MAX_MS("queen_timers_claim_duration_seconds_max (Micrometer's decaying max)"),
    FIRES("fire transactions in the interval"),
    FIRE_MEAN_MS("mean fire transaction in the interval"),
    FIRE_P50_MS("fire transaction p50 in the interval, from the delta of the queen_timers_fire_duration_seconds buckets"),
    FIRE_P99_MS("fire transaction p99 in the interval"),
    FIRE_MAX_MS("queen_timers_fire_duration_seconds_max"),
    LATE_COUNT("frames that reached the log in the interval"),
    LATE_P50_MS("lateness p50 of those frames: segment created_at minus the deliverAt the payload carries"),
    LATE_P90_MS("lateness p90"),
    LATE_P99_MS("lateness p99"),
    LATE_MAX_MS("lateness max"),
    CPU_BRIDGE("CPU % of the bridge JVM"),
    CPU_SWEEPER("CPU % of the sweeper JVMs"),
    CPU_BROKER("CPU % of the Kafka broker JVM"),
    CPU_POSTGRES("CPU % of PostgreSQL (postmaster, backends, autovacuum, walwriter, ...)"),
    CPU_RIG("CPU % of the rig's own JVM (producer, sampler, log decoding)");

    private final String doc;

    Column(String doc) {
        this.doc = doc;
    }

    public String doc() {
        return doc;
    }

    public String header() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
