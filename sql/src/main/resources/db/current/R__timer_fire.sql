-- The fire: delivers packed segments of claimed timers into the log in ONE transaction (the caller
-- runs it as one autocommit statement), as the named steps of docs/decisions.md#the-fires-order, each
-- a function below with what it does, why, and which locks it takes:
--
--   0. timer_fire_segments_v2   read the call: the segments, where each one's blob and hashes start
--   1. timer_fire_hold_v2       lock/verify the claimed rows: FOR UPDATE SKIP LOCKED, claim token, live lease
--   2. timer_fire_live_v2       a segment is live only if every one of its rows is held
--   3. (the driver)             at most one live segment per destination, or SQLSTATE 22023
--   4. timer_fire_destinations_v2  provision + pre-lock the live segments' partitions, ascending id
--   5. timer_fire_push_v2       log_append_v1 per live segment, in segment order
--   6. timer_fire_deliver_v2    delete the delivered rows and write their `fired` outbox rows, one statement
--   7. timer_fire_release_v2    hand the held rows of stale segments back (claimable in the next cycle)
--
-- The call, queen.timer_fire_v2(p_segments, p_blobs, p_hashes):
--   p_segments  [{"tenant_id", "queue", "partition", "blob_length",
--                 "timers": [{"timer_key", "claim_token"}, ...] in frame order}], in push order;
--   p_blobs     the segments' blobs back to back (segment i's is the next blob_length bytes);
--   p_hashes    the frames' txn hashes back to back, 16 bytes per timer, in the same order.
-- Blobs and hashes stay binary (inside JSON they would be base64, a third larger). Every key must be
-- present (queen.json_rows_v1). Result: one row per segment, in order: seg (1-based), verdict `fired`
-- or `stale`, and for a fired segment its partition id, first offset and created_at.
--
-- Guarantees:
--  * Exactly once: the push (5) and the disappearance of the staging rows (6) are one commit. A crash
--    before the commit leaves the rows claimed; after the lease they are claimed again with NEW tokens,
--    and this call replayed by a sweeper that lost its lease finds no row with its token: `stale`.
--    Nothing is deduplicated after the fact.
--  * All-or-nothing per segment: a segment is a compressed blob, so one missing frame cannot be cut
--    out of it. Two live segments for one destination are refused, so a later timer can never enter
--    the log before an earlier one; the sweeper splits a larger destination across calls.
--  * The `fired` outbox row per segment carries one element per timer with producer subs and trace
--    contexts aligned with it (R__timer_audit_events.sql).
--  * SKIP LOCKED, never a plain FOR UPDATE, on timer rows: a fire never waits for a command; a row
--    somebody else holds just makes its segment stale (its other rows are released at once).
--
-- Lock order, which is also the steps' order:
--     queen.log_timers rows in (tenant_id, queue, timer_key) ascending, SKIP LOCKED (step 1; no
--     timer-row lock is taken after it: steps 6 and 7 address rows already held, by TID)
--   -> queen.queues -> queen.log_partitions ascending id (step 4, one statement: two fires with
--     overlapping destinations cannot deadlock)
--   -> leaves: queen.log_segments, queen.log_txns (step 5), queen.timer_audit_outbox (step 6).
-- Due-ness and lease liveness come from PostgreSQL's clock (now() of this transaction).
--
-- State between the steps travels in three composite types (V101: timer_fire_segment_v2,
-- timer_fire_held_v2, timer_fire_pushed_v2), so each step's inputs are named.
--
-- PRICE:
--  * A segment is the unit of verdict: one row lost to somebody else sends its whole segment back to
--    the queue (the other rows are claimable at once and go out in the next cycle).
--  * Planner settings on the two functions whose statements need hash joins of in-memory sets
--    (steps 4 and 6), each with its reason there. Measured 2026-12-03 (PostgreSQL 15, a fire of 4,500
--    claimed timers in 100 segments, rolled back): 468-587 ms per fire with them, 658-675 ms without.

-- Step 0. Read the call and check its shape: a malformed call is a caller bug (SQLSTATE 22023), never
-- a partial fire. Every segment has at least one timer; the blobs and the hashes add up exactly.
-- Takes no lock.
CREATE OR REPLACE FUNCTION queen.timer_fire_segments_v2(p_segments JSONB, p_blobs BYTEA, p_hashes BYTEA)
RETURNS SETOF queen.timer_fire_segment_v2
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
    v_segments queen.timer_fire_segment_v2[];
    v_bad      BIGINT;
BEGIN
    PERFORM queen.json_rows_v1('timer_fire_v2 segments', p_segments, '{tenant_id,queue,partition,blob_length,timers}');
    SELECT s.i INTO v_bad
      FROM jsonb_array_elements(p_segments) WITH ORDINALITY AS s(e, i)
     WHERE jsonb_typeof(s.e -> 'timers') IS DISTINCT FROM 'array'
        OR jsonb_array_length(CASE WHEN jsonb_typeof(s.e -> 'timers') = 'array' THEN s.e -> 'timers' ELSE '[]' END) = 0
        OR EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(s.e -> 'timers') = 'array' THEN s.e -> 'timers' ELSE '[]' END) AS t(r)
                    WHERE jsonb_typeof(t.r) <> 'object' OR NOT t.r ?& '{timer_key,claim_token}')
     ORDER BY s.i
     LIMIT 1;
    IF v_bad IS NOT NULL THEN
        RAISE EXCEPTION 'timer_fire_v2: segment % (1-based) needs "timers", a non-empty array of {"timer_key", "claim_token"}', v_bad
            USING ERRCODE = '22023';
    END IF;

    v_segments := ARRAY(
        SELECT ROW(s.seg, s.tenant_id, s.queue, s."partition", s.frames,
                   sum(s.blob_length) OVER w - s.blob_length, s.blob_length,
                   sum(s.frames) OVER w - s.frames)::queen.timer_fire_segment_v2
          FROM (SELECT x.seg::int AS seg, x.tenant_id, x.queue, x."partition", x.blob_length,
                       jsonb_array_length(x.timers) AS frames
                  FROM ROWS FROM (jsonb_to_recordset(p_segments)
                                  AS (tenant_id UUID, queue TEXT, "partition" TEXT, blob_length INT, timers JSONB))
                       WITH ORDINALITY AS x(tenant_id, queue, "partition", blob_length, timers, seg)) s
        WINDOW w AS (ORDER BY s.seg)
         ORDER BY s.seg);
    IF EXISTS (SELECT 1 FROM unnest(v_segments) AS s
                WHERE s.tenant_id IS NULL OR s.queue IS NULL OR s."partition" IS NULL
                   OR s.blob_length IS NULL OR s.blob_length < 0)
       OR octet_length(p_blobs) IS DISTINCT FROM (SELECT coalesce(sum(s.blob_length), 0) FROM unnest(v_segments) AS s)
       OR octet_length(p_hashes) IS DISTINCT FROM (SELECT 16 * coalesce(sum(s.frames), 0) FROM unnest(v_segments) AS s) THEN
        RAISE EXCEPTION 'timer_fire_v2: a segment lacks its destination, or the blobs or hashes do not match the segments'
            USING ERRCODE = '22023';
    END IF;
    RETURN QUERY SELECT * FROM unnest(v_segments);
END;
$$;

-- Step 1. Lock and verify the claimed rows. Each named row is looked up by its full primary key
-- inside a LATERAL subquery, visited in (tenant_id, queue, timer_key) order: the plan is a nested loop
-- of unique index probes whatever the table statistics say (a join the planner was free to reorder
-- turned quadratic once statistics went stale under a burst, V031-V035). A row is held only if it
-- still carries the caller's claim token with a live lease and the segment's partition; a row another
-- transaction holds is skipped, never waited for (docs/decisions.md#the-fire-never-waits-on-a-timer-row).
-- Only (segment, position, TID) is kept: the row stays locked by us until commit, so steps 6 and 7
-- address it by TID, and step 6 reads the rest from its delete's RETURNING.
-- Lock order: queen.log_timers rows, (tenant_id, queue, timer_key) ascending, SKIP LOCKED (never waits).
CREATE OR REPLACE FUNCTION queen.timer_fire_hold_v2(p_segments JSONB)
RETURNS SETOF queen.timer_fire_held_v2
LANGUAGE sql
VOLATILE
AS $$
    SELECT x.seg, x.pos, l.row_ctid
      FROM (SELECT s.seg::int AS seg, (r.pos - 1)::int AS pos, s.tenant_id, s.queue, s."partition",
                   r.timer_key, r.claim_token
              FROM ROWS FROM (jsonb_to_recordset(p_segments) AS (tenant_id UUID, queue TEXT, "partition" TEXT, timers JSONB))
                   WITH ORDINALITY AS s(tenant_id, queue, "partition", timers, seg)
             CROSS JOIN LATERAL ROWS FROM (jsonb_to_recordset(s.timers) AS (timer_key TEXT, claim_token UUID))
                   WITH ORDINALITY AS r(timer_key, claim_token, pos)
             ORDER BY s.tenant_id, s.queue COLLATE "C", r.timer_key COLLATE "C") x
     CROSS JOIN LATERAL (
            SELECT t.ctid AS row_ctid
              FROM queen.log_timers t
             WHERE t.tenant_id = x.tenant_id
               AND t.queue = x.queue COLLATE "C"
               AND t.timer_key = x.timer_key COLLATE "C"
               AND t.claim_token = x.claim_token
               AND t.claimed_until > now()
               AND t."partition" = x."partition"
               FOR UPDATE OF t SKIP LOCKED) l
$$;

-- Step 2. The live segments, ascending: those whose every row step 1 holds. A segment is a compressed
-- blob, so one frame that is no longer ours cannot be cut out of it: it goes back whole (step 7).
-- Takes no lock.
CREATE OR REPLACE FUNCTION queen.timer_fire_live_v2(p_segments queen.timer_fire_segment_v2[], p_held queen.timer_fire_held_v2[])
RETURNS INT[]
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT coalesce(array_agg(s.seg ORDER BY s.seg), '{}')
      FROM unnest(p_segments) AS s
      JOIN (SELECT h.seg, count(*) AS n FROM unnest(p_held) AS h GROUP BY h.seg) h ON h.seg = s.seg
     WHERE h.n = s.frames
$$;

-- Step 4. Provision and pre-lock the live segments' partitions (queen.timer_destinations_v1, R__timer_destinations.sql):
-- missing queues and partitions are created by the log's ordered inserts, then every partition is
-- locked FOR UPDATE in ascending id in one statement, before the first push. Returns each live
-- segment's partition id (base_offset and created_at NULL until step 5).
-- The mapping back to segments is a join of two in-memory sets of up to thousands of destinations;
-- nested loops are switched off for that statement only (v1's reason: never quadratic), after
-- timer_destinations_v1 ran with the session's settings.
-- Lock order: queen.queues → queen.log_partitions ascending id (R__timer_destinations.sql).
CREATE OR REPLACE FUNCTION queen.timer_fire_destinations_v2(p_segments queen.timer_fire_segment_v2[], p_live INT[])
RETURNS SETOF queen.timer_fire_pushed_v2
LANGUAGE plpgsql
VOLATILE
AS $$
DECLARE
    v_resolved JSONB;
    v_out      queen.timer_fire_pushed_v2[];
BEGIN
    SELECT jsonb_agg(jsonb_build_object('tenant_id', d.tenant_id, 'queue', d.queue, 'partition', d."partition",
                                        'partition_id', d.partition_id))
      INTO v_resolved
      FROM queen.timer_destinations_v1(
               ARRAY(SELECT s.tenant_id FROM unnest(p_segments) AS s WHERE s.seg = ANY (p_live) ORDER BY s.seg),
               ARRAY(SELECT s.queue FROM unnest(p_segments) AS s WHERE s.seg = ANY (p_live) ORDER BY s.seg),
               ARRAY(SELECT s."partition" FROM unnest(p_segments) AS s WHERE s.seg = ANY (p_live) ORDER BY s.seg)) d;
    v_out := queen.timer_fire_map_destinations_v2(p_segments, p_live, coalesce(v_resolved, '[]'));
    IF cardinality(v_out) IS DISTINCT FROM cardinality(p_live) THEN
        RAISE EXCEPTION 'timer_fire_v2: no partition resolved for % of % live segments',
            cardinality(p_live) - coalesce(cardinality(v_out), 0), cardinality(p_live) USING ERRCODE = 'XX000';
    END IF;
    RETURN QUERY SELECT * FROM unnest(v_out);
END;
$$;

-- Step 4's mapping (a helper of it): each live segment meets its resolved destination by
-- (tenant, queue, partition). A hash join, never a nested loop (the SET below, for this one statement).
CREATE OR REPLACE FUNCTION queen.timer_fire_map_destinations_v2(p_segments queen.timer_fire_segment_v2[], p_live INT[],
                                                                p_resolved JSONB)
RETURNS queen.timer_fire_pushed_v2[]
LANGUAGE sql
IMMUTABLE
SET enable_nestloop = off
AS $$
    SELECT array_agg(ROW(s.seg, d.partition_id, NULL, NULL)::queen.timer_fire_pushed_v2 ORDER BY s.seg)
      FROM unnest(p_segments) AS s
      JOIN jsonb_to_recordset(p_resolved) AS d(tenant_id UUID, queue TEXT, "partition" TEXT, partition_id UUID)
        ON d.tenant_id = s.tenant_id AND d.queue = s.queue AND d."partition" = s."partition"
     WHERE s.seg = ANY (p_live)
$$;

-- Step 5. Push each live segment, in segment order, with queen.log_append_v1 (R__log_push.sql): its offsets
-- are allocated and its created_at stamped under the partition row lock, already held (step 4).
-- Lock order: the partition rows are held; leaves: queen.log_segments, queen.log_txns.
CREATE OR REPLACE FUNCTION queen.timer_fire_push_v2(p_segments queen.timer_fire_segment_v2[],
                                                    p_destinations queen.timer_fire_pushed_v2[],
                                                    p_blobs BYTEA, p_hashes BYTEA)
RETURNS SETOF queen.timer_fire_pushed_v2
LANGUAGE plpgsql
VOLATILE
AS $$
DECLARE
    r RECORD;
    a RECORD;
BEGIN
    FOR r IN
        SELECT s.seg, s.frames, d.partition_id,
               substring(p_blobs FROM (s.blob_from + 1)::int FOR s.blob_length) AS blob,
               substring(p_hashes FROM (16 * s.hash_from + 1)::int FOR 16 * s.frames) AS hashes
          FROM unnest(p_destinations) AS d
          JOIN unnest(p_segments) AS s ON s.seg = d.seg
         ORDER BY s.seg
    LOOP
        SELECT x.base_offset, x.created_at INTO a FROM queen.log_append_v1(r.partition_id, r.frames, r.blob, r.hashes) x;
        RETURN NEXT ROW(r.seg, r.partition_id, a.base_offset, a.created_at)::queen.timer_fire_pushed_v2;
    END LOOP;
END;
$$;

-- Step 6. Deliver: delete the pushed segments' rows and write their `fired` audit events, one
-- statement. The delete's RETURNING hands over what the events need, read from the rows we hold (no
-- second read, no per-row data carried from step 1). ONE outbox row per pushed segment (V026): the
-- destination and first offset, and per timer in frame order an element with a new event_id, its key,
-- txn, messageId, deliverAt and attempts; fired_subs (V056) and fired_traces (V090) aligned with it,
-- NULL when no timer of the segment has one. No per-timer JSON, identity value or outbox tuple is made
-- inside this transaction, which holds the destination partitions.
-- Rows meet their segment by TID: thousands of rows on each side, so a hash join (nested loops off);
-- work_mem 64 MB (PRICE: up to 64 MB per sort or hash node) because a large fire's row set is about
-- 10 MB and spilled to disk at 4 MB. Both only for this function.
-- Lock order: timer rows held since step 1 (by TID: no new lock, no wait), then the outbox (leaf).
CREATE OR REPLACE FUNCTION queen.timer_fire_deliver_v2(p_segments queen.timer_fire_segment_v2[],
                                                       p_held queen.timer_fire_held_v2[],
                                                       p_pushed queen.timer_fire_pushed_v2[])
RETURNS VOID
LANGUAGE sql
VOLATILE
SET enable_nestloop = off
SET work_mem = '64MB'
AS $$
    WITH gone AS (
        DELETE FROM queen.log_timers t
         WHERE t.ctid = ANY (ARRAY(SELECT h.row_ctid FROM unnest(p_held) AS h
                                    WHERE h.seg IN (SELECT p.seg FROM unnest(p_pushed) AS p)))
        RETURNING t.ctid AS row_ctid, t.timer_key, t.txn, t.message_id, t.deliver_at, t.attempts, t.producer_sub, t.trace_context)
    INSERT INTO queen.timer_audit_outbox (tenant_id, type, event, fired, fired_subs, fired_traces)
    SELECT s.tenant_id, 'fired',
           jsonb_build_object('queue', s.queue, 'partition', s."partition",
                              'offset', p.base_offset, 'segmentCreatedAt', p.created_at),
           array_agg(ROW(gen_random_uuid(), g.timer_key, g.txn, g.message_id, g.deliver_at, g.attempts)::queen.timer_fired_v1
                     ORDER BY h.pos),
           CASE WHEN bool_or(g.producer_sub IS NOT NULL) THEN array_agg(g.producer_sub ORDER BY h.pos) END,
           CASE WHEN bool_or(g.trace_context IS NOT NULL) THEN array_agg(g.trace_context ORDER BY h.pos) END
      FROM gone g
      JOIN unnest(p_held) AS h ON h.row_ctid = g.row_ctid
      JOIN unnest(p_pushed) AS p ON p.seg = h.seg
      JOIN unnest(p_segments) AS s ON s.seg = h.seg
     GROUP BY h.seg, s.tenant_id, s.queue, s."partition", p.base_offset, p.created_at
     ORDER BY h.seg
$$;

-- Step 7. Release the held rows of stale segments: claim_token NULL, claimed_until = now(), attempts
-- unchanged, so they are claimable in the very next cycle rather than after the lease. (The price of
-- all-or-nothing per segment: one row lost to somebody else sends its segment's other rows back.)
-- Lock order: rows held since step 1 (by TID).
CREATE OR REPLACE FUNCTION queen.timer_fire_release_v2(p_held queen.timer_fire_held_v2[], p_pushed queen.timer_fire_pushed_v2[])
RETURNS VOID
LANGUAGE sql
VOLATILE
AS $$
    UPDATE queen.log_timers t
       SET claim_token = NULL,
           claimed_until = now()
     WHERE t.ctid = ANY (ARRAY(SELECT h.row_ctid FROM unnest(p_held) AS h
                                WHERE h.seg NOT IN (SELECT p.seg FROM unnest(p_pushed) AS p)))
$$;

-- The fire: the steps above, in their order, in the caller's one transaction.
CREATE OR REPLACE FUNCTION queen.timer_fire_v2(p_segments JSONB, p_blobs BYTEA, p_hashes BYTEA)
RETURNS TABLE (seg INT, verdict TEXT, partition_id UUID, base_offset BIGINT, created_at TIMESTAMPTZ)
LANGUAGE plpgsql
VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    v_segments queen.timer_fire_segment_v2[];
    v_held     queen.timer_fire_held_v2[];
    v_live     INT[];
    v_pushed   queen.timer_fire_pushed_v2[] := '{}';
BEGIN
    v_segments := ARRAY(SELECT s FROM queen.timer_fire_segments_v2(p_segments, p_blobs, p_hashes) AS s);   -- 0. read
    IF cardinality(v_segments) = 0 THEN
        RETURN;
    END IF;
    v_held := ARRAY(SELECT h FROM queen.timer_fire_hold_v2(p_segments) AS h);                            -- 1. hold
    v_live := queen.timer_fire_live_v2(v_segments, v_held);                                               -- 2. live
    -- 3. Two live segments for one destination are refused: if one went stale while the other fired, a
    -- later timer would enter the log before an earlier one (the sweeper never sends such a call).
    IF EXISTS (SELECT 1 FROM unnest(v_segments) AS s WHERE s.seg = ANY (v_live)
                GROUP BY s.tenant_id, s.queue, s."partition" HAVING count(*) > 1) THEN
        RAISE EXCEPTION 'timer_fire_v2: two live segments for one (tenant, queue, partition) in one fire'
            USING ERRCODE = '22023';
    END IF;
    IF cardinality(v_live) > 0 THEN
        v_pushed := ARRAY(SELECT d FROM queen.timer_fire_destinations_v2(v_segments, v_live) AS d);      -- 4. pre-lock
        v_pushed := ARRAY(SELECT p FROM queen.timer_fire_push_v2(v_segments, v_pushed, p_blobs, p_hashes) AS p); -- 5. push
        PERFORM queen.timer_fire_deliver_v2(v_segments, v_held, v_pushed);                                -- 6. deliver
    END IF;
    PERFORM queen.timer_fire_release_v2(v_held, v_pushed);                                                -- 7. release

    RETURN QUERY
        SELECT s.seg, CASE WHEN p.seg IS NULL THEN 'stale' ELSE 'fired' END, p.partition_id, p.base_offset, p.created_at
          FROM unnest(v_segments) AS s
          LEFT JOIN unnest(v_pushed) AS p ON p.seg = s.seg
         ORDER BY s.seg;
END;
$$;
