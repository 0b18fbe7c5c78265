-- V003  Partition cleanup (DESIGN.md §2.2, §6.7): delete partitions queen.log_partition_dead_v1
--       (V006) calls dead, a bounded number per call.
--
-- Why it is so:
--  * Race-safe against a concurrent push by lock, then re-check with a fresh snapshot. The dead
--    check alone cannot be trusted inside one DELETE: when the DELETE waits for a pushing
--    transaction's row lock and then proceeds, PostgreSQL re-checks the row itself against its
--    qualifiers, but the function's NOT EXISTS legs still run on the DELETE's old snapshot and
--    miss the segment the push just committed; the cascade would then delete it. So statement 1
--    picks up to p_limit dead partitions and locks them FOR UPDATE SKIP LOCKED (ascending id);
--    statement 2, with a new snapshot taken after those locks (plpgsql, VOLATILE, READ COMMITTED),
--    re-checks queen.log_partition_dead_v1 and deletes. A push that committed before our lock is
--    visible to the re-check; a push after it waits in log_lock_partitions_v1 / log_append_v1,
--    finds the row gone and provisions the partition again. Under REPEATABLE READ the lock step
--    raises 40001 instead (transient).
--  * SKIP LOCKED: cleanup never waits for a push, a DLQ insert or a consumer (their foreign-key
--    checks hold KEY SHARE on the partition row, which conflicts with our lock): a partition somebody
--    is touching right now is alive anyway, and maintenance must never slow the fire path.
--  * The full dead check runs in statement 1 too, so the LIMIT is filled with partitions that are
--    actually dead; with only the cheap age test there, old partitions that hold segments would
--    fill every call and cleanup would never get past them. PRICE: statement 1 walks partitions in
--    id order, one probe per leg per old partition, until p_limit dead ones are found: O(old live
--    partitions) per call at worst. It runs on a slow clock (default every 10 minutes), never on the
--    fire path.
--  * A pending timer does not keep its destination alive (queen.log_timers names no partition):
--    the fire provisions the partition again. A Queen broker that shares the database and writes
--    queen.log_dlq / queen.log_consumers for a partition at the very moment it is deleted gets a
--    foreign-key error; that is why the sweeper can switch this step off when a broker shares the
--    database.
--
-- Lock order: queen.log_partitions only (by ascending id, SKIP LOCKED), then its leaves via the
-- ON DELETE CASCADE of log_segments, log_txns, log_consumers (there are none but stale consumers,
-- or the partition would not be dead). No queen.log_timers or queen.queues lock is taken.

CREATE OR REPLACE FUNCTION queen.log_cleanup_partitions_v1(p_cutoff TIMESTAMPTZ, p_limit INT)
RETURNS SETOF UUID
LANGUAGE plpgsql
VOLATILE
AS $$
DECLARE
    v_ids UUID[];
BEGIN
    IF p_limit IS NULL OR p_limit < 1 THEN
        RAISE EXCEPTION 'log_cleanup_partitions_v1: p_limit must be >= 1, got %', p_limit USING ERRCODE = '22023';
    END IF;

    -- Statement 1. Lock order: queen.log_partitions rows, ascending id, SKIP LOCKED (never waits).
    SELECT array_agg(d.id) INTO v_ids
      FROM (SELECT p.id
              FROM queen.log_partitions p
             WHERE p.created_at < p_cutoff
               AND coalesce(p.last_write_at, p.created_at) < p_cutoff
               AND queen.log_partition_dead_v1(p.id, p_cutoff)
             ORDER BY p.id
             LIMIT p_limit
               FOR UPDATE SKIP LOCKED) d;

    -- Statement 2, a fresh snapshot: re-check under our locks, then delete (rows already held;
    -- leaves go by cascade, after their partition).
    RETURN QUERY
    DELETE FROM queen.log_partitions p
     WHERE p.id = ANY (v_ids)
       AND queen.log_partition_dead_v1(p.id, p_cutoff)
    RETURNING p.id;
END;
$$;
