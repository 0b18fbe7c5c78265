-- The fire: delivers packed segments of claimed timers into the log in ONE transaction (the caller
-- runs it as one autocommit statement), as the named steps of docs/decisions.md#the-fires-order, each
-- a function below with what it does, why, and which locks it takes:
--
--   0. timer_fire_segments_v2   read the call: the segments, where each one's blob and hashes start
--   1. timer_fire_hold_v2       lock/verify the claimed rows: FOR UPDATE SKIP LOCKED, claim token, live lease
--   2. timer_fire_live_v2       a segment is live only if every one of its rows is held
--   3. (the driver)             at most one live segment per destination, or SQLSTATE 22023
--   4. timer_fire_guard_queues_v1  share-lock the live segments' existing queues (their encryption_enabled
--                               cannot change until commit), ascending (tenant_id, name)
--   5. timer_fire_destinations_v2  provision + pre-lock the live segments' partitions, ascending id
--   6. timer_fire_refused_v1    the clear rows (encrypted = false) of live segments whose queue has
--                               encryption_enabled: their segments are refused, never pushed
--   7. timer_fire_push_v2       log_append_v1 per live segment that is not refused, in segment order
--   8. timer_fire_deliver_v3    delete the delivered rows and write their `fired` outbox rows, one statement;
--                               a recurring row's successor is staged there (R__timer_cadence.sql)
--   9. timer_fire_refuse_v2     dead-letter the refused rows: queen.log_dlq with error `encryption_unavailable`,
--                               delete, `dead_lettered` outbox rows, one statement
--  10. timer_fire_release_v2    hand the held rows of stale and refused segments back (claimable in the
--                               next cycle)
--
-- The call, queen.timer_fire_v3(p_segments, p_blobs, p_hashes):
--   p_segments  [{"tenant_id", "queue", "partition", "blob_length",
--                 "timers": [{"timer_key", "claim_token"}, ...] in frame order}], in push order; a recurring
--                 timer's element adds "plan", its successor (queen.timer_series_next_v1);
--   p_blobs     the segments' blobs back to back (segment i's is the next blob_length bytes);
--   p_hashes    the frames' txn hashes back to back, 16 bytes per timer, in the same order.
-- Blobs and hashes stay binary (inside JSON they would be base64, a third larger). Every key must be
-- present (queen.json_rows_v1). Result: one row per segment, in order: seg (1-based), verdict `fired`,
-- `stale` or `refused`; for a fired segment its partition id, first offset and created_at; for a
-- refused one `refused`, the 0-based frame positions of its timers that were dead-lettered.
--
-- Guarantees:
--  * Exactly once: the push (7) and the disappearance of the staging rows (8) are one commit. A crash
--    before the commit leaves the rows claimed; after the lease they are claimed again with NEW tokens,
--    and this call replayed by a sweeper that lost its lease finds no row with its token: `stale`.
--    Nothing is deduplicated after the fact.
--  * All-or-nothing per segment: a segment is a compressed blob, so one missing frame cannot be cut
--    out of it. Two live segments for one destination are refused, so a later timer can never enter
--    the log before an earlier one; the sweeper splits a larger destination across calls.
--  * The `fired` outbox row per segment carries one element per timer with producer subs and trace
--    contexts aligned with it (R__timer_audit_events.sql).
--  * No plaintext into an encrypted queue: a timer staged clear (encrypted = false) before its
--    queue got queen.queues.encryption_enabled is never appended to it. The flag is read in THIS
--    transaction under a share lock on the queue row taken before the push (step 4), so a flip that
--    commits after the claim, or while this fire runs, is seen: an UPDATE of the flag waits for this
--    fire's commit, or this fire waits for the UPDATE's and reads the new value. Such a timer is
--    dead-lettered at once (a permanent refusal, no attempt spent: the sweeper holds no key to seal it,
--    docs/security.md#payload-encryption); its segment is not pushed (a blob cannot be cut) and its other rows
--    go back to the queue to fire in the next cycle without it. The one window left: a queue that did
--    not exist at step 4, created by somebody else during this fire and switched on before its commit
--    (its flag is read unlocked in step 6); Queen's own push has the same window. The same holds for a
--    queue sealed by a bridge's encryption.queues only (no flag in queen.queues): the patterns each bridge
--    group wrote at its start (queen.bridge_sealed_queues) are read in step 6, each for the tenants of that group's command topics
--    only, so a timer staged clear before its queue was added to them is dead-lettered the same way once that
--    bridge restarted with them.
--  * SKIP LOCKED, never a plain FOR UPDATE, on timer rows: a fire never waits for a command; a row
--    somebody else holds just makes its segment stale (its other rows are released at once).
--
-- Lock order, which is also the steps' order:
--     queen.log_timers rows in (tenant_id, queue, timer_key) ascending, SKIP LOCKED (step 1; no
--     timer-row lock is taken after it: steps 6 to 10 address rows already held, by TID)
--   -> queen.queues FOR SHARE, (tenant_id, name) ascending (step 4; a queue missing then is born in
--     step 5 by our own uncommitted insert, or by a concurrent provisioner we waited for)
--   -> queen.queues inserts -> queen.log_partitions ascending id (step 5, one statement: two fires with
--     overlapping destinations cannot deadlock)
--   -> leaves: queen.log_segments, queen.log_txns (step 7), queen.timer_audit_outbox (steps 8, 9),
--     queen.log_dlq (step 9).
-- Due-ness and lease liveness come from PostgreSQL's clock (now() of this transaction).
--
-- State between the steps travels in three composite types (V005: timer_fire_segment_v2,
-- timer_fire_held_v2, timer_fire_pushed_v2), so each step's inputs are named.
--
-- PRICE:
--  * A segment is the unit of verdict: one row lost to somebody else sends its whole segment back to
--    the queue (the other rows are claimable at once and go out in the next cycle). The same for a
--    refused segment's encrypted rows: one cycle later.
--  * Step 4 share-locks every live destination's queue row for the fire (~0.5 s for a large one): an
--    UPDATE of a queue's settings (Queen's configure) waits for the fires in flight into that queue, and
--    a fire waits for such an UPDATE (bounded by the session's lock_timeout, 55P03: transient). Pushes
--    and other fires are not blocked (share locks and the partitions' FOR KEY SHARE do not conflict).
--    A transaction that updates two destination queues in the opposite order to a fire can deadlock with
--    it: PostgreSQL aborts one (40P01, transient for the fire: no attempt spent).
--    Step 6 reads queen.queues once per fire (one index probe per live destination) and the staged
--    rows only of segments whose queue is encrypted.
--  * A refused clear timer's payload stays in clear in its queen.log_dlq row (as it was staged, in
--    clear, in queen.log_timers): outside the log, for the operator's replay; never delivered.
--  * Planner settings on the two functions whose statements need hash joins of in-memory sets
--    (steps 5 and 8), each with its reason there: without them a large fire is measurably slower
--    (docs/benchmarks.md#figures-behind-the-schemas-choices).

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
    PERFORM queen.json_rows_v1('timer_fire_v3 segments', p_segments, '{tenant_id,queue,partition,blob_length,timers}');
    SELECT s.i INTO v_bad
      FROM jsonb_array_elements(p_segments) WITH ORDINALITY AS s(e, i)
     WHERE jsonb_typeof(s.e -> 'timers') IS DISTINCT FROM 'array'
        OR jsonb_array_length(CASE WHEN jsonb_typeof(s.e -> 'timers') = 'array' THEN s.e -> 'timers' ELSE '[]' END) = 0
        OR EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(s.e -> 'timers') = 'array' THEN s.e -> 'timers' ELSE '[]' END) AS t(r)
                    WHERE jsonb_typeof(t.r) <> 'object' OR NOT t.r ?& '{timer_key,claim_token}')
     ORDER BY s.i
     LIMIT 1;
    IF v_bad IS NOT NULL THEN
        RAISE EXCEPTION 'timer_fire_v3: segment % (1-based) needs "timers", a non-empty array of {"timer_key", "claim_token"}', v_bad
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
        RAISE EXCEPTION 'timer_fire_v3: a segment lacks its destination, or the blobs or hashes do not match the segments'
            USING ERRCODE = '22023';
    END IF;
    RETURN QUERY SELECT * FROM unnest(v_segments);
END;
$$;

-- Step 1. Lock and verify the claimed rows. Each named row is looked up by its full primary key
-- inside a LATERAL subquery, visited in (tenant_id, queue, timer_key) order: the plan is a nested loop
-- of unique index probes whatever the table statistics say (a join the planner was free to reorder
-- turned quadratic once statistics went stale under a burst, docs/decisions.md#plans-do-not-depend-on-statistics).
-- A row is held only if it
-- still carries the caller's claim token with a live lease and the segment's partition; a row another
-- transaction holds is skipped, never waited for (docs/decisions.md#the-fire-never-waits-on-a-timer-row).
-- Only (segment, position, TID) is kept: the row stays locked by us until commit, so steps 6 to 10
-- address it by TID, and step 8 reads the rest from its delete's RETURNING.
-- Lock order: queen.log_timers rows, (tenant_id, queue, timer_key) ascending, SKIP LOCKED (never waits).
CREATE OR REPLACE FUNCTION queen.timer_fire_hold_v2(p_segments JSONB)
RETURNS SETOF queen.timer_fire_held_v2
LANGUAGE plpgsql
VOLATILE
AS $$
BEGIN
    -- PL/pgSQL for its cached plan: a LANGUAGE sql function the fire calls is planned again at every call
    RETURN QUERY
    SELECT x.seg, x.pos, l.row_ctid
      FROM (SELECT s.seg::int AS seg, (r.pos - 1)::int AS pos, s.tenant_id, s.queue, s."partition",
                   r.timer_key, r.claim_token, r.plan
              FROM ROWS FROM (jsonb_to_recordset(p_segments) AS (tenant_id UUID, queue TEXT, "partition" TEXT, timers JSONB))
                   WITH ORDINALITY AS s(tenant_id, queue, "partition", timers, seg)
             CROSS JOIN LATERAL ROWS FROM (jsonb_to_recordset(s.timers) AS (timer_key TEXT, claim_token UUID, plan JSONB))
                   WITH ORDINALITY AS r(timer_key, claim_token, plan, pos)
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
               -- a recurring row needs its plan (the next occurrence, staged by step 8): without one it is
               -- not held, and its segment answers stale
               AND (t.recurrence IS NULL OR x.plan IS NOT NULL)
               FOR UPDATE OF t SKIP LOCKED) l;
END;
$$;

-- Step 2. The live segments, ascending: those whose every row step 1 holds. A segment is a compressed
-- blob, so one frame that is no longer ours cannot be cut out of it: it goes back whole (step 10).
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

-- Step 4. Share-lock the live segments' queues that exist, ascending (tenant_id, name), before anything
-- of the destinations is provisioned or locked (the lock order: queues before partitions). FOR SHARE
-- conflicts with an UPDATE of the row only: until commit nobody can switch encryption_enabled on under
-- this fire, and a switch in progress is waited for and then read (READ COMMITTED re-reads the row's
-- latest version). A queue missing here is born in step 5 by our own insert (uncommitted: nobody can
-- change it) or by a provisioner we waited for on its index entry; step 6 reads it then.
-- Lock order: queen.queues rows, (tenant_id, name) ascending; no partition held yet.
CREATE OR REPLACE FUNCTION queen.timer_fire_guard_queues_v1(p_segments queen.timer_fire_segment_v2[], p_live INT[])
RETURNS VOID
LANGUAGE plpgsql
VOLATILE
AS $$
BEGIN
    -- PERFORM runs the statement to its end: every row is locked (a LANGUAGE sql body would stop at the first).
    PERFORM 1
       FROM queen.queues q
      WHERE (q.tenant_id, q.name) IN (SELECT s.tenant_id, s.queue FROM unnest(p_segments) AS s WHERE s.seg = ANY (p_live))
      ORDER BY q.tenant_id, q.name
        FOR SHARE OF q;
END;
$$;

-- Step 5. Provision and pre-lock the live segments' partitions (queen.timer_destinations_v1, R__timer_destinations.sql):
-- missing queues and partitions are created by the log's ordered inserts, then every partition is
-- locked FOR UPDATE in ascending id in one statement, before the first push. Returns each live
-- segment's partition id (base_offset and created_at NULL until step 7).
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
        RAISE EXCEPTION 'timer_fire_v3: no partition resolved for % of % live segments',
            cardinality(p_live) - coalesce(cardinality(v_out), 0), cardinality(p_live) USING ERRCODE = 'XX000';
    END IF;
    RETURN QUERY SELECT * FROM unnest(v_out);
END;
$$;

-- Step 5's mapping (a helper of it): each live segment meets its resolved destination by
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

-- Step 6. The refused rows: the clear rows (encrypted = false) of live segments whose queue is encrypted,
-- as read now: its encryption_enabled (step 4's share lock keeps the flag of an existing queue as it is
-- until commit) or the encryption.queues patterns of a bridge group whose command topics the owner bound to
-- the segment's tenant (queen.bridge_sealed_queues; queen.bridge_topics): a group's patterns seal its own
-- tenants' queues only, so a group's '%' refuses no other tenant's clear timers. PRICE: one probe of queen.bridge_topics per group with patterns, per live destination. The
-- queues are read once, one probe per live destination, the patterns once; the staged rows only of the
-- segments whose queue is encrypted (by TID, held since step 1): none in the common case. VOLATILE: its
-- statements read what is committed when they run, not when the fire's statement began.
-- Takes no lock.
CREATE OR REPLACE FUNCTION queen.timer_fire_refused_v1(p_segments queen.timer_fire_segment_v2[], p_live INT[],
                                                       p_held queen.timer_fire_held_v2[])
RETURNS SETOF queen.timer_fire_held_v2
LANGUAGE plpgsql
VOLATILE
AS $$
DECLARE
    v_sealed INT[];
BEGIN
    v_sealed := ARRAY(SELECT s.seg
                        FROM unnest(p_segments) AS s
                       WHERE s.seg = ANY (p_live)
                         AND (EXISTS (SELECT 1 FROM queen.queues q
                                       WHERE q.tenant_id = s.tenant_id AND q.name = s.queue AND q.encryption_enabled IS TRUE)
                              OR s.queue LIKE ANY (ARRAY(
                                     SELECT unnest(b.patterns) FROM queen.bridge_sealed_queues b
                                      WHERE EXISTS (SELECT 1 FROM queen.bridge_topics t
                                                     WHERE t.group_id = b.group_id AND t.tenant_id = s.tenant_id)))));
    IF cardinality(v_sealed) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT h.seg, h.pos, h.row_ctid
          FROM unnest(p_held) AS h
          JOIN (SELECT t.ctid AS row_ctid
                  FROM queen.log_timers t
                 WHERE t.ctid = ANY (ARRAY(SELECT x.row_ctid FROM unnest(p_held) AS x WHERE x.seg = ANY (v_sealed)))
                   AND NOT t.encrypted) c ON c.row_ctid = h.row_ctid
         ORDER BY h.seg, h.pos;
END;
$$;

-- Step 7. Push each live segment that is not refused, in segment order, with queen.log_append_v1 (R__log_push.sql): its offsets
-- are allocated and its created_at stamped under the partition row lock, already held (step 5).
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

-- Step 8. Deliver: delete the pushed segments' rows and write their `fired` audit events, one
-- statement. The delete's RETURNING hands over what the events need, read from the rows we hold (no
-- second read, no per-row data carried from step 1). ONE outbox row per pushed segment (V003): the
-- destination and first offset, and per timer in frame order an element with a new event_id, its key,
-- txn, messageId, deliverAt and attempts; fired_subs and fired_traces aligned with it,
-- NULL when no timer of the segment has one. No per-timer JSON, identity value or outbox tuple is made
-- inside this transaction, which holds the destination partitions.
-- Rows meet their segment by TID: thousands of rows on each side, so a hash join (nested loops off);
-- work_mem 64 MB (PRICE: up to 64 MB per sort or hash node) because a large fire's row set is about
-- 10 MB and spilled to disk at 4 MB. Both only for this function.
-- Lock order: timer rows held since step 1 (by TID: no new lock, no wait), then the outbox (leaf).
CREATE OR REPLACE FUNCTION queen.timer_fire_deliver_v3(p_segments queen.timer_fire_segment_v2[],
                                                       p_held queen.timer_fire_held_v2[],
                                                       p_pushed queen.timer_fire_pushed_v2[],
                                                       p_plans JSONB)
RETURNS VOID
LANGUAGE plpgsql
VOLATILE
SET enable_nestloop = off
SET work_mem = '64MB'
AS $$
BEGIN
    -- PL/pgSQL for its cached plan: a LANGUAGE sql function the fire calls is planned again at every call
    WITH gone AS (
        DELETE FROM queen.log_timers t
         WHERE t.ctid = ANY (ARRAY(SELECT h.row_ctid FROM unnest(p_held) AS h
                                    WHERE h.seg IN (SELECT p.seg FROM unnest(p_pushed) AS p)))
        RETURNING t.ctid AS row_ctid, t.timer_key, t.txn, t.message_id, t.deliver_at, t.attempts, t.producer_sub, t.trace_context,
                  t.recurrence IS NOT NULL AS recurring,
                  CASE WHEN t.recurrence IS NOT NULL THEN t END AS series)  -- the whole row of recurring timers only
    INSERT INTO queen.timer_audit_outbox (tenant_id, type, event, fired, fired_subs, fired_traces, fired_recur)
    SELECT s.tenant_id, 'fired',
           jsonb_build_object('queue', s.queue, 'partition', s."partition",
                              'offset', p.base_offset, 'segmentCreatedAt', p.created_at),
           array_agg(ROW(gen_random_uuid(), g.timer_key, g.txn, g.message_id, g.deliver_at, g.attempts)::queen.timer_fired_v1
                     ORDER BY h.pos),
           CASE WHEN bool_or(g.producer_sub IS NOT NULL) THEN array_agg(g.producer_sub ORDER BY h.pos) END,
           CASE WHEN bool_or(g.trace_context IS NOT NULL) THEN array_agg(g.trace_context ORDER BY h.pos) END,
           -- a recurring timer's successor is staged here, after its delete (R__timer_cadence.sql)
           -- (g.recurring, not g.series IS NOT NULL: a row value IS NOT NULL only when every field of it is)
           CASE WHEN bool_or(g.recurring)
                THEN array_agg(CASE WHEN g.recurring
                                    THEN queen.timer_series_next_v1(g.series, p_plans -> (h.seg || ':' || h.pos)) END
                               ORDER BY h.pos) END
      FROM gone g
      JOIN unnest(p_held) AS h ON h.row_ctid = g.row_ctid
      JOIN unnest(p_pushed) AS p ON p.seg = h.seg
      JOIN unnest(p_segments) AS s ON s.seg = h.seg
     GROUP BY h.seg, s.tenant_id, s.queue, s."partition", p.base_offset, p.created_at
     ORDER BY h.seg;
END;
$$;

-- Step 9. Dead-letter the refused rows, one statement: each leaves queen.log_timers for queen.log_dlq
-- (as R__timer_dead_letter.sql writes a DLQ row: partition_id its destination partition, resolved and
-- locked in step 5; consumer_group '__timer__'; "offset" -1; its message_id and txn; payload as JSON or
-- the lossless form, queen.timer_payload_jsonb_v1, a zstd payload as {"encoding":"zstd+base64",..}, since
-- nothing is decompressed here; retry_count its attempts) with error `encryption_unavailable`, and a
-- `dead_lettered` audit row (queen.timer_event_v1, its error `encryption_unavailable`). A permanent
-- refusal: no attempt is spent, no retry could succeed (the sweeper has no key to seal it with).
-- Lock order: timer rows held since step 1 (by TID), partitions held since step 5; leaves
-- (queen.log_dlq, queen.timer_dlq_keys, queen.timer_audit_outbox).
CREATE OR REPLACE FUNCTION queen.timer_fire_refuse_v2(p_refused queen.timer_fire_held_v2[],
                                                      p_destinations queen.timer_fire_pushed_v2[],
                                                      p_plans JSONB)
RETURNS VOID
LANGUAGE plpgsql
VOLATILE
AS $$
BEGIN
    -- PL/pgSQL for its cached plan: a LANGUAGE sql function the fire calls is planned again at every call
    WITH gone AS (
        DELETE FROM queen.log_timers t
         WHERE t.ctid = ANY (ARRAY(SELECT r.row_ctid FROM unnest(p_refused) AS r))
        RETURNING t.ctid AS row_ctid, t AS timer),
    dlq AS (
        INSERT INTO queen.log_dlq (id, partition_id, consumer_group, "offset", message_id, transaction_id,
                                   payload, error, retry_count, failed_at)
        SELECT gen_random_uuid(), d.partition_id, '__timer__', -1, (g.timer).message_id, (g.timer).txn,
               CASE WHEN NOT (g.timer).payload_zstd
                        THEN queen.timer_payload_jsonb_v1((g.timer).payload, (g.timer).encrypted)
                    ELSE jsonb_build_object('encoding', 'zstd+base64', 'encrypted', (g.timer).encrypted,
                                            'data', encode((g.timer).payload, 'base64'))
               END,
               'encryption_unavailable', (g.timer).attempts, now()
          FROM gone g
          JOIN unnest(p_refused) AS r ON r.row_ctid = g.row_ctid
          JOIN unnest(p_destinations) AS d ON d.seg = r.seg
        RETURNING id, message_id),
    dlq_keys AS (  -- the tenant and timer key a DLQ row cannot hold (V005), joined by the timer's message id
        INSERT INTO queen.timer_dlq_keys (dlq_id, tenant_id, queue, timer_key)
        SELECT x.id, (g.timer).tenant_id, (g.timer).queue, (g.timer).timer_key
          FROM dlq x JOIN gone g ON (g.timer).message_id = x.message_id)
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT (g.timer).tenant_id, (g.timer).queue || '/' || (g.timer).timer_key, 'dead_lettered',
           queen.timer_event_v1(g.timer) || jsonb_build_object('error', 'encryption_unavailable')
           -- a series ends with a refused occurrence: each later one would be refused too, and
           -- each would write its payload in clear into queen.log_dlq; the event says why ("ended")
           || CASE WHEN (g.timer).recurrence IS NOT NULL
                   THEN queen.timer_series_next_v1(g.timer, (p_plans -> (r.seg || ':' || r.pos))
                                                            || '{"end": "encryption_required"}'::jsonb) ELSE '{}'::jsonb END
      FROM gone g
      JOIN unnest(p_refused) AS r ON r.row_ctid = g.row_ctid
     ORDER BY (g.timer).tenant_id, (g.timer).queue, (g.timer).timer_key;
END;
$$;

-- Step 10. Release the held rows of stale and refused segments (a refused segment's dead-lettered rows
-- are gone by then): claim_token NULL, claimed_until = now(), attempts
-- unchanged, so they are claimable in the very next cycle rather than after the lease. (The price of
-- all-or-nothing per segment: one row lost to somebody else sends its segment's other rows back.)
-- Lock order: rows held since step 1 (by TID).
CREATE OR REPLACE FUNCTION queen.timer_fire_release_v2(p_held queen.timer_fire_held_v2[], p_pushed queen.timer_fire_pushed_v2[])
RETURNS VOID
LANGUAGE plpgsql
VOLATILE
AS $$
BEGIN
    -- PL/pgSQL for its cached plan: a LANGUAGE sql function the fire calls is planned again at every call
    UPDATE queen.log_timers t
       SET claim_token = NULL,
           claimed_until = now()
     WHERE t.ctid = ANY (ARRAY(SELECT h.row_ctid FROM unnest(p_held) AS h
                                WHERE h.seg NOT IN (SELECT p.seg FROM unnest(p_pushed) AS p)));
END;
$$;

-- The fire: the steps above, in their order, in the caller's one transaction.
CREATE OR REPLACE FUNCTION queen.timer_fire_v3(p_segments JSONB, p_blobs BYTEA, p_hashes BYTEA)
RETURNS TABLE (seg INT, verdict TEXT, partition_id UUID, base_offset BIGINT, created_at TIMESTAMPTZ, refused INT[])
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    v_segments     queen.timer_fire_segment_v2[];
    v_held         queen.timer_fire_held_v2[];
    v_live         INT[];
    v_destinations queen.timer_fire_pushed_v2[] := '{}';
    v_refused      queen.timer_fire_held_v2[] := '{}';
    v_pushed       queen.timer_fire_pushed_v2[] := '{}';
    v_plans        JSONB;
BEGIN
    v_segments := ARRAY(SELECT s FROM queen.timer_fire_segments_v2(p_segments, p_blobs, p_hashes) AS s);   -- 0. read
    IF cardinality(v_segments) = 0 THEN
        RETURN;
    END IF;
    v_held := ARRAY(SELECT h FROM queen.timer_fire_hold_v2(p_segments) AS h);                            -- 1. hold
    v_live := queen.timer_fire_live_v2(v_segments, v_held);                                               -- 2. live
    -- The recurring timers' plans by "<seg>:<pos>" (0-based pos), read only when the call has one.
    IF jsonb_path_exists(p_segments, '$[*].timers[*].plan') THEN
        v_plans := (SELECT jsonb_object_agg(s.seg || ':' || (r.pos - 1), r.t -> 'plan')
                      FROM jsonb_array_elements(p_segments) WITH ORDINALITY AS s(e, seg)
                     CROSS JOIN LATERAL jsonb_array_elements(s.e -> 'timers') WITH ORDINALITY AS r(t, pos)
                     WHERE jsonb_typeof(r.t -> 'plan') = 'object');
    END IF;
    -- 3. Two live segments for one destination are refused: if one went stale while the other fired, a
    -- later timer would enter the log before an earlier one (the sweeper never sends such a call).
    IF EXISTS (SELECT 1 FROM unnest(v_segments) AS s WHERE s.seg = ANY (v_live)
                GROUP BY s.tenant_id, s.queue, s."partition" HAVING count(*) > 1) THEN
        RAISE EXCEPTION 'timer_fire_v3: two live segments for one (tenant, queue, partition) in one fire'
            USING ERRCODE = '22023';
    END IF;
    IF cardinality(v_live) > 0 THEN
        PERFORM queen.timer_fire_guard_queues_v1(v_segments, v_live);                                     -- 4. guard
        v_destinations := ARRAY(SELECT d FROM queen.timer_fire_destinations_v2(v_segments, v_live) AS d); -- 5. pre-lock
        v_refused := ARRAY(SELECT r FROM queen.timer_fire_refused_v1(v_segments, v_live, v_held) AS r);   -- 6. refused
        v_pushed := ARRAY(SELECT p FROM queen.timer_fire_push_v2(v_segments,                              -- 7. push
                              ARRAY(SELECT d FROM unnest(v_destinations) AS d
                                     WHERE d.seg NOT IN (SELECT r.seg FROM unnest(v_refused) AS r)),
                              p_blobs, p_hashes) AS p);
        IF cardinality(v_pushed) > 0 THEN
            PERFORM queen.timer_fire_deliver_v3(v_segments, v_held, v_pushed, v_plans);                   -- 8. deliver
        END IF;
        IF cardinality(v_refused) > 0 THEN
            PERFORM queen.timer_fire_refuse_v2(v_refused, v_destinations, v_plans);                       -- 9. refuse
        END IF;
    END IF;
    PERFORM queen.timer_fire_release_v2(v_held, v_pushed);                                                -- 10. release

    RETURN QUERY
        SELECT s.seg,
               CASE WHEN p.seg IS NOT NULL THEN 'fired' WHEN r.positions IS NOT NULL THEN 'refused' ELSE 'stale' END,
               p.partition_id, p.base_offset, p.created_at, r.positions
          FROM unnest(v_segments) AS s
          LEFT JOIN unnest(v_pushed) AS p ON p.seg = s.seg
          LEFT JOIN (SELECT x.seg, array_agg(x.pos ORDER BY x.pos) AS positions
                       FROM unnest(v_refused) AS x GROUP BY x.seg) r ON r.seg = s.seg
         ORDER BY s.seg;
END;
$$;
