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

CREATE OR REPLACE FUNCTION queen.log_append_v1(p_partition_id UUID, p_count INT, p_blob BYTEA, p_hashes BYTEA)
RETURNS TABLE (base_offset BIGINT, created_at TIMESTAMPTZ)
LANGUAGE plpgsql
VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    v_prev    TIMESTAMPTZ;
    v_base    BIGINT;
    v_created TIMESTAMPTZ;
BEGIN
    IF p_count IS NULL OR p_count < 1 THEN
        RAISE EXCEPTION 'log_append_v1: p_count must be >= 1, got %', p_count USING ERRCODE = '22023';
    END IF;
    IF octet_length(p_hashes) IS DISTINCT FROM 16 * p_count THEN
        RAISE EXCEPTION 'log_append_v1: % frames need % hash bytes, got %', p_count, 16 * p_count, octet_length(p_hashes)
            USING ERRCODE = '22023';
    END IF;

    -- Lock order: the partition row (queen.log_partitions), already held when the caller pre-locked.
    SELECT p.last_write_at INTO v_prev FROM queen.log_partitions p WHERE p.id = p_partition_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'log_append_v1: partition % does not exist (deleted by cleanup? provision it again)', p_partition_id
            USING ERRCODE = 'P0002';
    END IF;
    v_created := greatest(clock_timestamp(), v_prev);

    UPDATE queen.log_partitions p
       SET last_offset    = p.last_offset + p_count,
           last_write_at  = v_created,
           oldest_live_at = coalesce(p.oldest_live_at, v_created),
           oldest_txn_at  = coalesce(p.oldest_txn_at, v_created)
     WHERE p.id = p_partition_id
    RETURNING p.last_offset - p_count + 1 INTO v_base;

    -- Lock order: leaves, after their partition.
    INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
    VALUES (p_partition_id, v_base, v_base + p_count - 1, v_created, p_blob);
    INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
    VALUES (p_partition_id, v_base, v_base + p_count - 1, v_created, p_hashes);

    base_offset := v_base;
    created_at := v_created;
    RETURN NEXT;
END;
$$;

-- V003's two statements, with the re-check's survivors collected first so their log_txns rows can be
-- deleted before the partitions (see the header; V003 says why the re-check is a second statement).
CREATE OR REPLACE FUNCTION queen.log_cleanup_partitions_v1(p_cutoff TIMESTAMPTZ, p_limit INT)
RETURNS SETOF UUID
LANGUAGE plpgsql
VOLATILE
AS $$
DECLARE
    v_ids  UUID[];
    v_dead UUID[];
BEGIN
    IF p_limit IS NULL OR p_limit < 1 THEN
        RAISE EXCEPTION 'log_cleanup_partitions_v1: p_limit must be >= 1, got %', p_limit USING ERRCODE = '22023';
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
