-- V002  The push: provision, pre-lock, append (DESIGN.md §5, §8).
--
-- Why it is so:
--  * Offsets are allocated only under the queen.log_partitions row lock: log_append_v1 is one
--    UPDATE ... SET last_offset = last_offset + n ... RETURNING, so two pushes into one partition
--    serialize on that row, offsets are gapless and disjoint, and a rolled-back push rolls its
--    allocation back with it (no gap). created_at is stamped by the same UPDATE, under the same
--    lock, as greatest(clock_timestamp(), previous last_write_at): monotone per partition in
--    offset order even when the clock steps back. PRICE: one row lock per partition per push;
--    pushes into one partition never run in parallel. That is the log's ordering, bought on purpose.
--  * Queues and partitions are provisioned lazily, by the push (the seed: "the queue is born at the
--    fire"). Each space is written by ONE statement, INSERT ... SELECT ... ORDER BY <unique key>
--    ON CONFLICT DO NOTHING, so two provisioners that want overlapping rows take the unique-index
--    entries in the same order and one simply waits for the other: no cycle. A NOT EXISTS probe in
--    front keeps the common case (everything exists) a pure read that takes no lock at all.
--  * A transaction that pushes into several partitions calls log_provision_v1 ONCE for all of
--    them, then log_lock_partitions_v1 ONCE, then log_append_v1 per segment. Calling log_push_v1
--    several times in one transaction instead would interleave queue inserts with partition locks
--    (statement 2's queue insert after statement 1's partition lock): two such transactions can wait
--    on each other, which per-statement ordering does not prevent because they are different
--    statements. log_push_v1 is for one segment per transaction.
--  * Partition cleanup (V003) may delete a partition between provisioning and locking. The lock
--    statement then returns without that id and the caller provisions again (log_push_v1 does so
--    itself). Cleanup locks with SKIP LOCKED and re-checks under its lock, so it never deletes a
--    partition a push holds.
--  * Partition ids are compared the way PostgreSQL compares uuid (bytewise). Java's UUID.compareTo
--    is a signed comparison and sorts differently: the lock order lives in SQL, never in Java.
--
-- Lock order of the project: queen.log_timers -> queen.queues -> queen.log_partitions -> leaves
-- (log_segments, log_txns, log_dlq, outbox); inside a space by key, partitions by ascending id.
-- Each statement below says which part of that order it keeps.

-- Provisions the distinct (tenant, queue, partition) triples of three parallel arrays and returns
-- the partition id of each. namespace = the part of the name before the first '.', task = the
-- second part or ''. LANGUAGE sql: PostgreSQL resolves its tables when it is created.
CREATE OR REPLACE FUNCTION queen.log_provision_v1(p_tenants UUID[], p_queues TEXT[], p_partitions TEXT[])
RETURNS TABLE (tenant_id UUID, queue TEXT, "partition" TEXT, partition_id UUID)
LANGUAGE sql
VOLATILE
AS $$
    -- Lock order: queen.queues, unique-index entries in (tenant_id, name) order; nothing held in a
    -- later space yet.
    INSERT INTO queen.queues (tenant_id, name, namespace, task)
    SELECT DISTINCT i.t, i.q, split_part(i.q, '.', 1), split_part(i.q, '.', 2)
      FROM unnest(p_tenants, p_queues) AS i(t, q)
     WHERE NOT EXISTS (SELECT 1 FROM queen.queues x WHERE x.tenant_id = i.t AND x.name = i.q)
     ORDER BY i.t, i.q
        ON CONFLICT DO NOTHING;

    -- Lock order: queen.log_partitions after queen.queues; unique-index entries in (queue_id, name)
    -- order. A new row is invisible to every other transaction until commit, so inserting it is the
    -- strongest lock on it; existing rows are not locked here (log_lock_partitions_v1 does that).
    INSERT INTO queen.log_partitions (queue_id, name)
    SELECT DISTINCT q.id, i.p
      FROM unnest(p_tenants, p_queues, p_partitions) AS i(t, qn, p)
      JOIN queen.queues q ON q.tenant_id = i.t AND q.name = i.qn
     WHERE NOT EXISTS (SELECT 1 FROM queen.log_partitions x WHERE x.queue_id = q.id AND x.name = i.p)
     ORDER BY q.id, i.p
        ON CONFLICT DO NOTHING;

    -- No locks. A fresh snapshot (VOLATILE, READ COMMITTED) sees rows a concurrent provisioner
    -- committed while we waited on its index entry; under REPEATABLE READ such a conflict is a
    -- serialization failure (40001, transient) instead.
    SELECT DISTINCT i.t, i.q, i.p, lp.id
      FROM unnest(p_tenants, p_queues, p_partitions) AS i(t, q, p)
      JOIN queen.queues qq ON qq.tenant_id = i.t AND qq.name = i.q
      JOIN queen.log_partitions lp ON lp.queue_id = qq.id AND lp.name = i.p;
$$;

-- Pre-locks partitions, ONE statement, ascending id: ORDER BY puts the sort below the row-lock
-- step, so rows are locked in id order. Returns the ids it locked; an id missing from the result
-- was deleted meanwhile (partition cleanup) and the caller provisions it again.
CREATE OR REPLACE FUNCTION queen.log_lock_partitions_v1(p_ids UUID[])
RETURNS SETOF UUID
LANGUAGE sql
VOLATILE
AS $$
    -- Lock order: queen.log_partitions by ascending id, nothing in a later space held yet.
    SELECT p.id FROM queen.log_partitions p WHERE p.id = ANY (p_ids) ORDER BY p.id FOR UPDATE;
$$;

-- Appends one segment of p_count frames to a partition: allocates base_offset..base_offset+p_count-1
-- under the partition row lock and writes one log_segments row and one log_txns row.
-- Raises P0002 (no_data_found) when the partition does not exist.
CREATE OR REPLACE FUNCTION queen.log_append_v1(p_partition_id UUID, p_count INT, p_blob BYTEA, p_hashes BYTEA)
RETURNS TABLE (base_offset BIGINT, created_at TIMESTAMPTZ)
LANGUAGE plpgsql
VOLATILE
AS $$
#variable_conflict use_column
DECLARE
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

    -- Lock order: the partition row (queen.log_partitions), already held when the caller pre-locked;
    -- otherwise taken here. Offsets and created_at are computed from the latest row version, under
    -- that lock.
    UPDATE queen.log_partitions p
       SET last_offset   = p.last_offset + p_count,
           last_write_at = greatest(clock_timestamp(), p.last_write_at)
     WHERE p.id = p_partition_id
    RETURNING p.last_offset - p_count + 1, p.last_write_at
         INTO v_base, v_created;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'log_append_v1: partition % does not exist (deleted by cleanup? provision it again)', p_partition_id
            USING ERRCODE = 'P0002';
    END IF;

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

-- Provision + lock + append of ONE segment into (tenant, queue, partition). For one segment per
-- transaction (see the header); several partitions in one transaction go through
-- log_provision_v1 / log_lock_partitions_v1 / log_append_v1 instead.
CREATE OR REPLACE FUNCTION queen.log_push_v1(p_tenant UUID, p_queue TEXT, p_partition TEXT,
                                             p_count INT, p_blob BYTEA, p_hashes BYTEA)
RETURNS TABLE (partition_id UUID, base_offset BIGINT, created_at TIMESTAMPTZ)
LANGUAGE plpgsql
VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    v_id     UUID;
    v_locked UUID;
BEGIN
    -- Two rounds suffice: a partition provisioned in round 2 after cleanup deleted the old one is
    -- new and uncommitted, so no cleanup can see it, let alone delete it.
    FOR round IN 1..2 LOOP
        -- Lock order: queen.queues, then queen.log_partitions (log_provision_v1).
        SELECT pr.partition_id INTO v_id
          FROM queen.log_provision_v1(ARRAY[p_tenant], ARRAY[p_queue], ARRAY[p_partition]) pr;
        -- Lock order: queen.log_partitions, one row.
        SELECT l INTO v_locked FROM queen.log_lock_partitions_v1(ARRAY[v_id]) l;
        IF v_locked IS NOT NULL THEN
            -- Lock order: leaves, under the partition lock held above.
            RETURN QUERY SELECT v_id, a.base_offset, a.created_at
                           FROM queen.log_append_v1(v_id, p_count, p_blob, p_hashes) a;
            RETURN;
        END IF;
    END LOOP;
    RAISE EXCEPTION 'log_push_v1: partition %/%/% vanished twice between provisioning and locking',
        p_tenant, p_queue, p_partition USING ERRCODE = '40001';
END;
$$;
