-- V061  Every append keeps Queen's partition bookkeeping; partition cleanup deletes log_txns rows
--       itself. Both are our own functions (V002, V003), replaced here; no Queen object is touched.
--
-- Why it is so:
--  * Queen's retention finds work through two per-partition facts (queen-mq/queen 81010fab,
--    001_log_schema.sql): oldest_live_at = created_at of the segment at log_start, oldest_txn_at =
--    created_at of the log_txns row at txns_start, NULL = nothing live. A partition whose columns
--    stay NULL is never visited, so the segments the sweeper fired would never be purged. Queen's own
--    push writes them on the empty -> non-empty transition only (COALESCE); so does this append, with
--    the segment's own created_at, under the same partition row lock that allocates the offsets.
--  * last_write_at is NOT NULL in Queen's table and is the column Queen's pop candidate scan and
--    partition cleanup read; this append sets it to the segment's created_at, as before.
--    PRICE: last_write_at and the two watermarks are indexed in Queen's table, so an append whose
--    last_write_at changes is never a HOT update. Queen quantizes last_write_at to one change a second
--    to stay HOT at message rates; we keep it exact because created_at = greatest(clock_timestamp(),
--    last_write_at) is what keeps created_at monotone per partition even when the clock steps back,
--    and timer fires are control-plane rates.
--  * The lock is taken by a SELECT ... FOR UPDATE first (a no-op when the caller pre-locked), so the
--    stamp is read once, after the lock, and written to all four columns.
--  * Counters Queen keeps on partitions live in its own statement triggers on queen.log_partitions
--    (partitions created / deleted); where Queen installed them they fire for our inserts and
--    deletes too. Per-consumer counters (total_consumed) belong to Queen's pop.
--  * Cleanup: queen.log_txns has no foreign key in Queen's shape, so a partition delete no longer
--    cascades to it; the cleanup deletes the partition's log_txns rows itself, in the same
--    transaction, after the re-check under its locks. log_segments (none, by definition) and
--    log_consumers still go by their cascade, which Queen's tables have.
--  * When a Queen broker shares the database, Queen's own partition cleanup does this job; the
--    sweeper's step can stay off there (sweeper setting cleanup.enabled, see the README).
--
--  * A Queen broker older than the version we follow made its log_partitions without the two
--    watermarks, and V001 (which never alters a Queen table) left it so. Every append would then fail
--    at the fire; this migration refuses to run instead, and says what to do.
--
-- Lock order: unchanged from V002 / V003 (queen.log_partitions row, then leaves).
--
-- Since issue 26 this file defines no function or view (docs/decisions.md#one-live-definition-of-every-function):
-- queen.log_append_v1, queen.log_cleanup_partitions_v1 live, once and current, in db/current/R__log_cleanup.sql, db/current/R__log_push.sql.
-- The text above is the history of why they were made so.

DO $$
BEGIN
    IF (SELECT count(*) FROM information_schema.columns
         WHERE table_schema = 'queen' AND table_name = 'log_partitions'
           AND column_name IN ('oldest_live_at', 'oldest_txn_at')) <> 2 THEN
        RAISE EXCEPTION 'queen.log_partitions has no oldest_live_at / oldest_txn_at: the Queen schema in this database is older than the version queen-timers follows (queen-mq/queen 81010fab, README "Schema"); upgrade the Queen broker sharing this database, let it boot once, then start queen-timers again'
            USING ERRCODE = '55000';
    END IF;
END
$$;
