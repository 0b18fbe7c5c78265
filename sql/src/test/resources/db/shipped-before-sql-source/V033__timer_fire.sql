-- V033  The fire (DESIGN.md §6.4, seed "The fire itself never waits in this space").
--
-- queen.timer_fire_v1 delivers packed segments of claimed timers into the log in ONE transaction
-- (the caller runs it as one autocommit statement), in the seed's order:
--   1. verify: lock every named row FOR UPDATE SKIP LOCKED, keeping only rows that still carry the
--      caller's claim_token with a live lease (claimed_until > now()) and the segment's partition;
--   2. a segment is live only if ALL of its rows are held (all-or-nothing per segment): a segment is
--      a compressed blob, so one missing frame cannot be cut out of it;
--   3. two live segments for one (tenant, queue, partition) are rejected (SQLSTATE 22023): if one of
--      them could go stale while the other fires, a later timer would enter the log before an earlier
--      one, breaking "the order they enter the log is visible_at order". The sweeper never sends such
--      a call; a destination larger than one fire is split across successive calls;
--   4. provision missing queues/partitions and pre-lock every destination partition in ascending id,
--      one statement (queen.timer_destinations_v1, V032);
--   5. push each live segment with queen.log_append_v1 (V002: offsets allocated under the partition
--      row lock, created_at stamped under it);
--   6. delete the delivered rows (held since step 1: no new lock, no wait) and, in the same statement,
--      write their `fired` audit events: one outbox row per live segment carrying one element per
--      timer (V026 says why); the relay expands it into one event per timer with offset, partition,
--      lateMs, messageId, txn, ...;
--   7. release held-but-undelivered rows (rows of stale segments): claim_token NULL,
--      claimed_until = now(), so they are claimable in the very next cycle, not after the lease.
-- Result: one row per segment, verdict `fired` or `stale`.
--
-- Why exactly once: the push (5) and the disappearance of the staging row (6) are one commit. A crash
-- anywhere before the commit leaves the rows claimed with an outstanding lease; after the lease they are
-- claimed again with NEW tokens, and this call, replayed by a sweeper that lost its lease, finds no row
-- with its token and answers `stale`. Nothing is deduplicated after the fact; nothing needs reconciling.
--
-- Why SKIP LOCKED and not a plain FOR UPDATE before the delete. A design note once prescribed a plain
-- FOR UPDATE before the final delete; it is cancelled (seed, V025 header), and it fails twice:
--   (a) it named an id column this table does not have (the key is (tenant_id, queue, timer_key)), so
--       the migration would kill the boot;
--   (b) without SKIP LOCKED the fire becomes a waiter on timer rows: one slow cancel inside a long
--       bridge transaction could stop the fire of the whole sweeper while it holds the lease of every
--       other timer of its batch.
-- Here the rows are locked once, SKIP LOCKED, at the start; a row somebody else holds just makes its
-- segment stale (its other rows are released at once), and the delete at the end only touches rows
-- this transaction already holds.
--
-- Parameters (arrays, so the whole fire is one round trip):
--   per segment i:  p_tenants[i], p_queues[i], p_partitions[i], p_counts[i] (frames),
--                   p_blob_lengths[i] (its blob is the next p_blob_lengths[i] bytes of p_blobs);
--                   its hashes are the next 16 * p_counts[i] bytes of p_hashes (queen.log_txns form);
--   per row, in segment order (segment 1's rows first, each segment's rows in frame order):
--                   p_row_segs[j] (its segment), p_keys[j], p_tokens[j]. A row's frame offset is
--                   base_offset + its position among its segment's rows.
--   Blobs and hashes are passed back to back in one bytea each: a bytea travels in binary, where a
--   bytea[] would be hex text twice its size.
--
-- PRICE: a segment is the unit of verdict, so one row lost to somebody else (cancelled after a lease
-- expiry, reclaimed) sends its whole segment back to the queue; the other rows are claimable at once
-- and go out in the next cycle. The all-or-nothing rule is what keeps a frame that is no longer ours
-- out of a blob we cannot edit.
--
-- Lock order (DESIGN.md §8): queen.log_timers rows in (tenant_id, queue, timer_key) ascending, SKIP
-- LOCKED → queen.queues → queen.log_partitions ascending id (V032) → leaves: queen.log_segments and
-- queen.log_txns (log_append_v1), queen.timer_audit_outbox. No timer-row lock is taken after step 1.
-- Due-ness and lease liveness come from PostgreSQL's clock (now() of this transaction).

CREATE OR REPLACE FUNCTION queen.timer_fire_v1(
    p_tenants      UUID[],
    p_queues       TEXT[],
    p_partitions   TEXT[],
    p_counts       INT[],
    p_blobs        BYTEA,
    p_blob_lengths INT[],
    p_hashes       BYTEA,
    p_row_segs     INT[],
    p_keys         TEXT[],
    p_tokens       UUID[])
RETURNS TABLE (seg INT, verdict TEXT, partition_id UUID, base_offset BIGINT, created_at TIMESTAMPTZ)
LANGUAGE plpgsql
VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    v_now      TIMESTAMPTZ := now();
    v_nseg     INT := coalesce(cardinality(p_tenants), 0);
    v_nrows    BIGINT;
    -- rows held by step 1: their segment, their position in it, their TID (unordered: a set)
    v_h_seg    INT[];
    v_h_pos    INT[];
    v_h_ctid   TID[];
    v_live     INT[];
    v_is_live  BOOLEAN[];
    v_pids     UUID[];
    v_bases    BIGINT[];
    v_created  TIMESTAMPTZ[];
    v_dt       UUID[];
    v_dq       TEXT[];
    v_dp       TEXT[];
    v_did      UUID[];
    v_base     BIGINT;
    v_at       TIMESTAMPTZ;
    r          RECORD;
BEGIN
    -- Shape checks: a malformed call is a caller bug, never a partial fire.
    IF v_nseg = 0 THEN
        RETURN;
    END IF;
    IF cardinality(p_queues) IS DISTINCT FROM v_nseg OR cardinality(p_partitions) IS DISTINCT FROM v_nseg
       OR cardinality(p_counts) IS DISTINCT FROM v_nseg OR cardinality(p_blob_lengths) IS DISTINCT FROM v_nseg THEN
        RAISE EXCEPTION 'timer_fire_v1: per-segment arrays differ in length' USING ERRCODE = '22023';
    END IF;
    SELECT sum(c) INTO v_nrows FROM unnest(p_counts) AS c;
    IF EXISTS (SELECT 1 FROM unnest(p_counts) AS c WHERE c IS NULL OR c < 1)
       OR cardinality(p_keys) IS DISTINCT FROM v_nrows OR cardinality(p_tokens) IS DISTINCT FROM v_nrows
       OR cardinality(p_row_segs) IS DISTINCT FROM v_nrows
       OR EXISTS (SELECT 1
                    FROM (SELECT r.seg, lag(r.seg) OVER (ORDER BY r.ord) AS prev
                            FROM unnest(p_row_segs) WITH ORDINALITY AS r(seg, ord)) x
                   WHERE x.seg IS NULL OR x.seg < 1 OR x.seg > v_nseg OR x.seg < x.prev)
       OR EXISTS (SELECT 1
                    FROM unnest(p_counts) WITH ORDINALITY AS s(c, i)
                    LEFT JOIN (SELECT rs, count(*) AS n FROM unnest(p_row_segs) AS rs GROUP BY rs) r ON r.rs = s.i
                   WHERE coalesce(r.n, 0) <> s.c)
       OR octet_length(p_hashes) IS DISTINCT FROM 16 * v_nrows
       OR octet_length(p_blobs) IS DISTINCT FROM (SELECT sum(l) FROM unnest(p_blob_lengths) AS l) THEN
        RAISE EXCEPTION 'timer_fire_v1: rows, hashes or blobs do not match the segment counts' USING ERRCODE = '22023';
    END IF;

    -- 1. Verify and hold. The rows are visited in (tenant_id, queue, timer_key) order and each is
    --    looked up by its full primary key inside a LATERAL subquery: the plan is a nested loop of
    --    unique index probes whatever the table statistics say (a join the planner is free to reorder
    --    turned quadratic once statistics went stale under a burst). A row's segment attributes come
    --    from a join with the per-segment arrays, never from p_queues[seg]: subscripting a text[] walks
    --    it from the start, once per row. Only (segment, position, TID) is kept: the row stays locked by
    --    us until commit, so the delete and the release below address it by TID, and the audit row
    --    reads the rest from the delete's RETURNING.
    -- Lock order: queen.log_timers rows, (tenant_id, queue, timer_key) ascending, SKIP LOCKED (never waits).
    SELECT array_agg(x.seg), array_agg(x.pos), array_agg(l.row_ctid)
      INTO v_h_seg, v_h_pos, v_h_ctid
      FROM (SELECT r.seg, r.key, r.token, s.t, s.q, s.p,
                   (row_number() OVER (PARTITION BY r.seg ORDER BY r.ord) - 1)::int AS pos
              FROM unnest(p_row_segs, p_keys, p_tokens) WITH ORDINALITY AS r(seg, key, token, ord)
              JOIN unnest(p_tenants, p_queues, p_partitions) WITH ORDINALITY AS s(t, q, p, i) ON s.i = r.seg
             ORDER BY s.t, s.q COLLATE "C", r.key COLLATE "C") x
     CROSS JOIN LATERAL (
            SELECT t.ctid AS row_ctid
              FROM queen.log_timers t
             WHERE t.tenant_id = x.t
               AND t.queue = x.q COLLATE "C"
               AND t.timer_key = x.key COLLATE "C"
               AND t.claim_token = x.token
               AND t.claimed_until > v_now
               AND t."partition" = x.p
               FOR UPDATE OF t SKIP LOCKED) l;

    -- 2. Live segments: every row held.
    v_is_live := array_fill(false, ARRAY[v_nseg]);
    SELECT array_agg(s.i ORDER BY s.i) INTO v_live
      FROM unnest(p_counts) WITH ORDINALITY AS s(c, i)
      JOIN (SELECT hs, count(*) AS n FROM unnest(v_h_seg) AS hs GROUP BY hs) h ON h.hs = s.i
     WHERE h.n = s.c;
    v_live := coalesce(v_live, '{}');
    FOREACH v_base IN ARRAY v_live LOOP
        v_is_live[v_base] := true;
    END LOOP;

    -- 3. At most one live segment per destination.
    IF EXISTS (SELECT 1 FROM unnest(v_live) AS l(i)
                GROUP BY p_tenants[l.i], p_queues[l.i], p_partitions[l.i] HAVING count(*) > 1) THEN
        RAISE EXCEPTION 'timer_fire_v1: two live segments for one (tenant, queue, partition) in one fire'
            USING ERRCODE = '22023';
    END IF;

    v_pids    := array_fill(NULL::uuid, ARRAY[v_nseg]);
    v_bases   := array_fill(NULL::bigint, ARRAY[v_nseg]);
    v_created := array_fill(NULL::timestamptz, ARRAY[v_nseg]);

    IF cardinality(v_live) > 0 THEN
        -- 4. Provision and pre-lock. Lock order: queen.queues → queen.log_partitions ascending id (V032).
        --    The mapping back to segments is a join of two in-memory sets of up to thousands of
        --    destinations: nested loops are switched off for it so it is a hash join, never quadratic.
        SELECT array_agg(d.tenant_id), array_agg(d.queue), array_agg(d."partition"), array_agg(d.partition_id)
          INTO v_dt, v_dq, v_dp, v_did
          FROM queen.timer_destinations_v1(
                   ARRAY(SELECT p_tenants[i] FROM unnest(v_live) AS i),
                   ARRAY(SELECT p_queues[i] FROM unnest(v_live) AS i),
                   ARRAY(SELECT p_partitions[i] FROM unnest(v_live) AS i)) d;
        PERFORM set_config('enable_nestloop', 'off', true);
        FOR r IN
            SELECT l.i, u.id
              FROM unnest(v_live) AS l(i)
              JOIN unnest(v_dt, v_dq, v_dp, v_did) AS u(t, q, p, id)
                ON u.t = p_tenants[l.i] AND u.q = p_queues[l.i] AND u.p = p_partitions[l.i]
        LOOP
            v_pids[r.i] := r.id;
        END LOOP;
        PERFORM set_config('enable_nestloop', 'on', true);

        -- 5. Push. Lock order: the partition rows are already held (step 4); leaves: log_segments, log_txns.
        FOR r IN
            SELECT s.i, s.c,
                   substring(p_blobs FROM (s.boff + 1)::int FOR s.blen) AS blob,
                   substring(p_hashes FROM (16 * s.hoff + 1)::int FOR 16 * s.c) AS hashes
              FROM (SELECT u.i, u.c, u.blen,
                           sum(u.blen) OVER (ORDER BY u.i) - u.blen AS boff,
                           sum(u.c) OVER (ORDER BY u.i) - u.c AS hoff
                      FROM unnest(p_counts, p_blob_lengths) WITH ORDINALITY AS u(c, blen, i)) s
             WHERE v_is_live[s.i]
             ORDER BY s.i
        LOOP
            IF v_pids[r.i] IS NULL THEN
                RAISE EXCEPTION 'timer_fire_v1: no partition resolved for segment %', r.i USING ERRCODE = 'XX000';
            END IF;
            SELECT a.base_offset, a.created_at INTO v_base, v_at
              FROM queen.log_append_v1(v_pids[r.i], r.c, r.blob, r.hashes) a;
            v_bases[r.i] := v_base;
            v_created[r.i] := v_at;
        END LOOP;

        -- 6. Delete the delivered rows and write their `fired` audit events, one statement: the delete's
        --    RETURNING hands over what the events need, read from the rows we hold (no second read, no
        --    per-row arrays carried from step 1). ONE outbox row per live segment (V026): the segment's
        --    destination and first offset, and per timer in frame order an element with a new event_id,
        --    its key, txn, messageId, deliverAt and attempts. No per-timer JSON, identity value or outbox
        --    tuple is made inside this transaction, which holds the destination partitions.
        --    Rows meet their segment by TID; that join is a hash join (nested loops off): thousands of
        --    rows on each side. work_mem is raised for the rest of this transaction (PRICE: up to 64 MB
        --    per sort or hash node): a large fire's row set is about 10 MB and spilled to disk at 4 MB.
        -- Lock order: timer rows held since step 1 (by TID: no new lock, no wait), then the outbox (leaf).
        PERFORM set_config('enable_nestloop', 'off', true);
        PERFORM set_config('work_mem', '64MB', true);
        WITH gone AS (
            DELETE FROM queen.log_timers t
             WHERE t.ctid = ANY (ARRAY(SELECT h.row_ctid FROM unnest(v_h_seg, v_h_ctid) AS h(seg, row_ctid)
                                        WHERE v_is_live[h.seg]))
            RETURNING t.ctid AS row_ctid, t.timer_key, t.txn, t.message_id, t.deliver_at, t.attempts)
        INSERT INTO queen.timer_audit_outbox (tenant_id, type, event, fired)
        SELECT p_tenants[h.seg], 'fired',
               jsonb_build_object('queue', p_queues[h.seg], 'partition', p_partitions[h.seg],
                                  'offset', v_bases[h.seg], 'segmentCreatedAt', v_created[h.seg]),
               array_agg(ROW(gen_random_uuid(), g.timer_key, g.txn, g.message_id, g.deliver_at, g.attempts)::queen.timer_fired_v1
                         ORDER BY h.pos)
          FROM gone g
          JOIN unnest(v_h_ctid, v_h_seg, v_h_pos) AS h(row_ctid, seg, pos) ON h.row_ctid = g.row_ctid
         GROUP BY h.seg
         ORDER BY h.seg;
        PERFORM set_config('enable_nestloop', 'on', true);
    END IF;

    -- 7. Release held-but-undelivered rows. Lock order: rows held since step 1 (by TID).
    UPDATE queen.log_timers t
       SET claim_token = NULL,
           claimed_until = v_now
     WHERE t.ctid = ANY (ARRAY(SELECT h.row_ctid FROM unnest(v_h_seg, v_h_ctid) AS h(seg, row_ctid)
                                WHERE NOT v_is_live[h.seg]));

    RETURN QUERY
        SELECT s.i::int,
               CASE WHEN v_is_live[s.i] THEN 'fired' ELSE 'stale' END,
               v_pids[s.i], v_bases[s.i], v_created[s.i]
          FROM generate_series(1, v_nseg) AS s(i);
END;
$$;
