-- Partition cleanup: delete partitions queen.log_partition_dead_v1 calls dead, a bounded number per
-- call (docs/decisions.md#partition-cleanup-runs-on-its-own-slow-clock). Our own function: Queen's
-- broker has its own cleanup, and the sweeper's step can be switched off where one shares the database.
--
-- Guarantees:
--  * Race-safe against a concurrent push by lock, then re-check with a fresh snapshot. Statement 1
--    picks up to p_limit dead partitions and locks them FOR UPDATE SKIP LOCKED (ascending id);
--    statement 2, with a new snapshot taken after those locks (plpgsql, VOLATILE, READ COMMITTED),
--    re-checks queen.log_partition_dead_v1 and deletes. A push that committed before our lock is
--    visible to the re-check; a push after it waits, finds the row gone and provisions the partition
--    again. (Inside one DELETE the function's NOT EXISTS legs would run on the old snapshot and miss the
--    segment a push just committed.) Under REPEATABLE READ the lock step raises 40001 (transient).
--  * SKIP LOCKED: cleanup never waits for a push, a DLQ insert or a consumer; maintenance never slows
--    the fire path.
--  * queen.log_txns has no foreign key in Queen's shape, so the cleanup deletes the partition's
--    log_txns rows itself, in the same transaction, after the re-check; log_segments (none, by
--    definition) and log_consumers go by their cascade.
--
-- Lock order: queen.log_partitions only (ascending id, SKIP LOCKED), then its leaves. No
-- queen.log_timers or queen.queues lock is taken.
--
-- PRICE: the full dead check runs in statement 1 too, so the limit is filled with partitions that are
-- actually dead; statement 1 walks partitions in id order, one probe per leg per old partition, until
-- p_limit dead ones are found: O(old live partitions) per call at worst, on a slow clock. A Queen
-- broker that writes queen.log_dlq / queen.log_consumers for a partition at the moment it is deleted
-- gets a foreign-key error (hence the switch).

-- The two statements of the header, with the re-check's survivors collected first so their log_txns rows can be
-- deleted before the partitions (the header says why the re-check is a second statement).
CREATE OR REPLACE FUNCTION queen.log_cleanup_partitions_v1(p_cutoff TIMESTAMPTZ, p_limit INT)
RETURNS SETOF UUID
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
VOLATILE
AS $$
DECLARE
    v_ids  UUID[];
    v_dead UUID[];
    v_min_idle INTERVAL;
BEGIN
    IF p_limit IS NULL OR p_limit < 1 THEN
        RAISE EXCEPTION 'log_cleanup_partitions_v1: p_limit must be >= 1, got %', p_limit USING ERRCODE = '22023';
    END IF;
    -- The owner's bound, not the caller's (queen.timer_settings, V006): a cutoff later than now() - min_cleanup_idle
    -- would call partitions written a moment ago dead, and delete them with their consumer cursors at once.
    SELECT s.min_cleanup_idle INTO v_min_idle FROM queen.timer_settings s;
    IF p_cutoff IS NULL OR p_cutoff > now() - coalesce(v_min_idle, INTERVAL '1 minute') THEN
        RAISE EXCEPTION 'log_cleanup_partitions_v1: p_cutoff % is later than now() - % (queen.timer_settings.min_cleanup_idle)',
            p_cutoff, coalesce(v_min_idle, INTERVAL '1 minute') USING ERRCODE = '22023';
    END IF;

    -- Statement 1. Lock order: queen.log_partitions rows, ascending id, SKIP LOCKED (never waits).
    SELECT array_agg(d.id) INTO v_ids
      FROM (SELECT p.id
              FROM queen.log_partitions p
             WHERE p.created_at < p_cutoff
               AND p.last_write_at < p_cutoff
               AND queen.log_partition_dead_v1(p.id, p_cutoff)
             ORDER BY p.id
             LIMIT p_limit
               FOR UPDATE SKIP LOCKED) d;
    IF v_ids IS NULL THEN
        RETURN;
    END IF;

    -- Statement 2, a fresh snapshot under our locks: the authoritative re-check.
    SELECT array_agg(u.id ORDER BY u.id) INTO v_dead
      FROM unnest(v_ids) AS u(id)
     WHERE queen.log_partition_dead_v1(u.id, p_cutoff);
    IF v_dead IS NULL THEN
        RETURN;
    END IF;

    -- Lock order: a leaf (no foreign key, nothing cascades to it), then the partitions we hold
    -- (log_segments and log_consumers go by their cascade).
    DELETE FROM queen.log_txns t WHERE t.partition_id = ANY (v_dead);
    RETURN QUERY
    DELETE FROM queen.log_partitions p WHERE p.id = ANY (v_dead) RETURNING p.id;
END;
$$;
