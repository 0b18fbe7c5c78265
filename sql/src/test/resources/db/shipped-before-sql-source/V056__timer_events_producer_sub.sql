-- V056  producerSub in the audit events of a timer's life after the schedule: `fired`, `retrying`,
-- `dead_lettered` (README "Producer identity").
--
-- Why: with topic.<name>.auth=jwt the bridge stores a PROVEN producer_sub (a token's sub) on the timer,
-- the fire already carries it in the frame (flag 2), and the command verdicts already name it; an audit
-- consumer following a timer to its end must see who scheduled it without reading the log. Each event
-- gets "producerSub" when the timer has one, and no field when it has none (as every other optional
-- field of an event).
--
-- How, and what it costs:
--   * `fired` rows (one per segment, V026) get a parallel array, fired_subs TEXT[], aligned with
--     fired[] (element i is the sub of timer i), NULL when no timer of the segment has a sub -- so a
--     deployment without producer subs writes nothing more than before. A parallel column rather than a
--     new attribute of queen.timer_fired_v1: a composite type used by a table column cannot take a new
--     attribute without rewriting the column (and every reader of the type), while ADD COLUMN of a
--     nullable column is a catalog change. PRICE: two arrays that must stay aligned; the CHECK below
--     pins their lengths, and the only writer is timer_fire_v1 (one array_agg ORDER BY each).
--   * The view and the relay read both arrays with ROWS FROM (unnest(fired), unnest(fired_subs)) WITH
--     ORDINALITY: one pass over each, no subscripting (which walks a text[] from its start per row).
--   * timer_fire_v1, timer_fail_v1 and timer_dead_letter_v1 are re-created with the same signatures,
--     bodies copied from V033/V034/V035 with only the producer_sub lines added (their headers keep the
--     reasoning and the lock order, which do not change: producer_sub is read from rows already held).

ALTER TABLE queen.timer_audit_outbox ADD COLUMN IF NOT EXISTS fired_subs TEXT[];
ALTER TABLE queen.timer_audit_outbox ADD CONSTRAINT timer_audit_outbox_fired_subs_aligned
    CHECK (fired_subs IS NULL OR cardinality(fired_subs) = cardinality(fired));

-- The audit outbox one row per event (V026), with producerSub on fired events.
CREATE OR REPLACE VIEW queen.timer_audit_events AS
SELECT o.id, 1::bigint AS seq, o.event_id, o.tenant_id, o.kafka_key, o.type, o.event, o.created_at
  FROM queen.timer_audit_outbox o
 WHERE o.fired IS NULL
UNION ALL
SELECT o.id, f.seq, f.event_id, o.tenant_id, (o.event->>'queue') || '/' || f.timer_key, o.type,
       jsonb_build_object(
           'queue', o.event->'queue',
           'timerKey', f.timer_key,
           'partition', o.event->'partition',
           'txn', f.txn,
           'messageId', f.message_id,
           'deliverAt', f.deliver_at,
           'offset', (o.event->>'offset')::bigint + f.seq - 1,
           'lateMs', floor(extract(epoch FROM ((o.event->>'segmentCreatedAt')::timestamptz - f.deliver_at)) * 1000)::bigint,
           'attempts', f.attempts)
         || CASE WHEN f.producer_sub IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('producerSub', f.producer_sub) END,
       o.created_at
  FROM queen.timer_audit_outbox o
 CROSS JOIN LATERAL ROWS FROM (unnest(o.fired), unnest(o.fired_subs))
       WITH ORDINALITY AS f(event_id, timer_key, txn, message_id, deliver_at, attempts, producer_sub, seq)
 WHERE o.fired IS NOT NULL;

-- The fire (V033), writing fired_subs.
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
            RETURNING t.ctid AS row_ctid, t.timer_key, t.txn, t.message_id, t.deliver_at, t.attempts, t.producer_sub)
        INSERT INTO queen.timer_audit_outbox (tenant_id, type, event, fired, fired_subs)
        SELECT p_tenants[h.seg], 'fired',
               jsonb_build_object('queue', p_queues[h.seg], 'partition', p_partitions[h.seg],
                                  'offset', v_bases[h.seg], 'segmentCreatedAt', v_created[h.seg]),
               array_agg(ROW(gen_random_uuid(), g.timer_key, g.txn, g.message_id, g.deliver_at, g.attempts)::queen.timer_fired_v1
                         ORDER BY h.pos),
               -- V056: the producer subs in the same order, or NULL when no timer of the segment has one
               CASE WHEN bool_or(g.producer_sub IS NOT NULL) THEN array_agg(g.producer_sub ORDER BY h.pos) END
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

-- A failed fire (V034), retrying events with producerSub.
CREATE OR REPLACE FUNCTION queen.timer_fail_v1(
    p_tenants           UUID[],
    p_queues            TEXT[],
    p_keys              TEXT[],
    p_tokens            UUID[],
    p_error             TEXT,
    p_transient         BOOLEAN,
    p_transient_backoff INTERVAL,
    p_backoff_base      INTERVAL,
    p_backoff_max       INTERVAL,
    p_max_attempts      INT)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, attempts INT, retry_at TIMESTAMPTZ, exhausted BOOLEAN)
LANGUAGE sql
VOLATILE
AS $$
WITH held AS MATERIALIZED (
    -- Lock order: queen.log_timers rows, primary key ascending, SKIP LOCKED.
    SELECT l.row_ctid
      FROM (SELECT n.* FROM unnest(p_tenants, p_queues, p_keys, p_tokens) AS n(tenant_id, queue, timer_key, token)
             ORDER BY n.tenant_id, n.queue COLLATE "C", n.timer_key COLLATE "C") n
     CROSS JOIN LATERAL (
            SELECT t.ctid AS row_ctid
              FROM queen.log_timers t
             WHERE t.tenant_id = n.tenant_id AND t.queue = n.queue COLLATE "C" AND t.timer_key = n.timer_key COLLATE "C"
               AND t.claim_token = n.token
               FOR UPDATE OF t SKIP LOCKED) l
),
failed AS (
    -- Lock order: rows held by `held` (by TID).
    UPDATE queen.log_timers t
       SET claim_token   = NULL,
           claimed_until = now() + CASE WHEN p_transient THEN p_transient_backoff
                                        ELSE least(p_backoff_base * power(2, least(t.attempts, 30)), p_backoff_max) END,
           attempts      = t.attempts + CASE WHEN p_transient THEN 0 ELSE 1 END,
           last_error    = p_error
     WHERE t.ctid = ANY (ARRAY(SELECT h.row_ctid FROM held h))
    RETURNING t.tenant_id, t.queue, t.timer_key, t."partition", t.txn, t.message_id, t.deliver_at,
              t.attempts, t.last_error, t.claimed_until, t.producer_sub
),
audit AS (
    -- Lock order: leaf.
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT f.tenant_id, f.queue || '/' || f.timer_key, 'retrying',
           jsonb_build_object('queue', f.queue, 'timerKey', f.timer_key, 'partition', f."partition",
                              'txn', f.txn, 'messageId', f.message_id, 'deliverAt', f.deliver_at,
                              'attempts', f.attempts, 'error', f.last_error)
             || CASE WHEN f.producer_sub IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('producerSub', f.producer_sub) END
      FROM failed f
     ORDER BY f.tenant_id, f.queue, f.timer_key
)
SELECT f.tenant_id, f.queue, f.timer_key, f.attempts, f.claimed_until, f.attempts >= p_max_attempts
  FROM failed f
 ORDER BY f.tenant_id, f.queue, f.timer_key;
$$;

-- The dead letter (V035), dead_lettered events with producerSub.
CREATE OR REPLACE FUNCTION queen.timer_dead_letter_v1(
    p_tenants      UUID[],
    p_queues       TEXT[],
    p_keys         TEXT[],
    p_payloads     BYTEA[],
    p_max_attempts INT)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, dlq_id UUID, partition_id UUID)
LANGUAGE plpgsql
VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    v_ord   BIGINT[];
    v_ctid  TID[];
    v_t     UUID[];
    v_q     TEXT[];
    v_k     TEXT[];
    v_p     TEXT[];
    v_pid   UUID[];
    v_dlq   UUID[];
    v_dt    UUID[];
    v_dq    TEXT[];
    v_dp    TEXT[];
    v_did   UUID[];
BEGIN
    IF coalesce(cardinality(p_tenants), 0) = 0 THEN
        RETURN;
    END IF;
    IF cardinality(p_queues) IS DISTINCT FROM cardinality(p_tenants) OR cardinality(p_keys) IS DISTINCT FROM cardinality(p_tenants)
       OR (p_payloads IS NOT NULL AND cardinality(p_payloads) IS DISTINCT FROM cardinality(p_tenants)) THEN
        RAISE EXCEPTION 'timer_dead_letter_v1: arrays differ in length' USING ERRCODE = '22023';
    END IF;

    -- 1. Hold the exhausted, unclaimed rows (full primary-key probes in a LATERAL subquery).
    -- Lock order: queen.log_timers rows, primary key ascending, SKIP LOCKED (never waits).
    SELECT array_agg(n.ord ORDER BY n.rn), array_agg(l.row_ctid ORDER BY n.rn), array_agg(n.tenant_id ORDER BY n.rn),
           array_agg(n.queue ORDER BY n.rn), array_agg(n.timer_key ORDER BY n.rn), array_agg(l.part ORDER BY n.rn)
      INTO v_ord, v_ctid, v_t, v_q, v_k, v_p
      FROM (SELECT u.*, row_number() OVER (ORDER BY u.tenant_id, u.queue COLLATE "C", u.timer_key COLLATE "C") AS rn
              FROM unnest(p_tenants, p_queues, p_keys) WITH ORDINALITY AS u(tenant_id, queue, timer_key, ord)
             ORDER BY u.tenant_id, u.queue COLLATE "C", u.timer_key COLLATE "C") n
     CROSS JOIN LATERAL (
            SELECT t.ctid AS row_ctid, t."partition" AS part
              FROM queen.log_timers t
             WHERE t.tenant_id = n.tenant_id AND t.queue = n.queue COLLATE "C" AND t.timer_key = n.timer_key COLLATE "C"
               AND t.attempts >= p_max_attempts
               AND t.claim_token IS NULL
               FOR UPDATE OF t SKIP LOCKED) l;
    IF v_ord IS NULL THEN
        RETURN;
    END IF;

    -- 2. Resolve each destination under the timer's own tenant (provision + pre-lock).
    -- Lock order: queen.queues → queen.log_partitions ascending id (V032).
    SELECT array_agg(d.tenant_id), array_agg(d.queue), array_agg(d."partition"), array_agg(d.partition_id)
      INTO v_dt, v_dq, v_dp, v_did
      FROM queen.timer_destinations_v1(
               ARRAY(SELECT DISTINCT ON (x.t, x.q, x.p) x.t FROM unnest(v_t, v_q, v_p) AS x(t, q, p) ORDER BY x.t, x.q, x.p),
               ARRAY(SELECT DISTINCT ON (x.t, x.q, x.p) x.q FROM unnest(v_t, v_q, v_p) AS x(t, q, p) ORDER BY x.t, x.q, x.p),
               ARRAY(SELECT DISTINCT ON (x.t, x.q, x.p) x.p FROM unnest(v_t, v_q, v_p) AS x(t, q, p) ORDER BY x.t, x.q, x.p)) d;
    -- in-memory mapping of rows to destinations: a hash join, never a nested loop
    PERFORM set_config('enable_nestloop', 'off', true);
    SELECT array_agg(d.id ORDER BY u.i), array_agg(gen_random_uuid() ORDER BY u.i)
      INTO v_pid, v_dlq
      FROM unnest(v_t, v_q, v_p) WITH ORDINALITY AS u(t, q, p, i)
      JOIN unnest(v_dt, v_dq, v_dp, v_did) AS d(t, q, p, id)
        ON d.t = u.t AND d.q = u.q AND d.p = u.p;
    PERFORM set_config('enable_nestloop', 'on', true);
    IF coalesce(cardinality(v_pid), 0) <> cardinality(v_ord) THEN
        RAISE EXCEPTION 'timer_dead_letter_v1: a destination did not resolve' USING ERRCODE = 'XX000';
    END IF;

    -- 3. The DLQ rows, read from the rows we hold (by TID). Lock order: leaf (queen.log_dlq; its foreign
    --    key share-locks partitions already held).
    INSERT INTO queen.log_dlq (id, partition_id, consumer_group, "offset", message_id, transaction_id,
                               payload, error, retry_count, failed_at)
    SELECT u.dlq, u.pid, '__timer__', -1, t.message_id, t.txn,
           CASE WHEN p_payloads IS NOT NULL AND p_payloads[u.ord::int] IS NOT NULL
                    THEN queen.timer_payload_jsonb_v1(p_payloads[u.ord::int], t.encrypted)
                WHEN NOT t.payload_zstd
                    THEN queen.timer_payload_jsonb_v1(t.payload, t.encrypted)
                ELSE jsonb_build_object('encoding', 'zstd+base64', 'encrypted', t.encrypted, 'data', encode(t.payload, 'base64'))
           END,
           t.last_error, t.attempts, now()
      FROM unnest(v_ord, v_ctid, v_pid, v_dlq) AS u(ord, row_ctid, pid, dlq)
     CROSS JOIN LATERAL (SELECT * FROM queen.log_timers x WHERE x.ctid = u.row_ctid) t;

    -- 4. Delete (rows held since step 1, by TID) and write `dead_lettered` audit rows (leaf).
    WITH gone AS (
        DELETE FROM queen.log_timers t
         WHERE t.ctid = ANY (v_ctid)
        RETURNING t.tenant_id, t.queue, t.timer_key, t."partition", t.txn, t.message_id, t.deliver_at,
                  t.attempts, t.last_error, t.producer_sub)
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT g.tenant_id, g.queue || '/' || g.timer_key, 'dead_lettered',
           jsonb_build_object('queue', g.queue, 'timerKey', g.timer_key, 'partition', g."partition",
                              'txn', g.txn, 'messageId', g.message_id, 'deliverAt', g.deliver_at,
                              'attempts', g.attempts, 'error', g.last_error)
             || CASE WHEN g.producer_sub IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('producerSub', g.producer_sub) END
      FROM gone g
     ORDER BY g.tenant_id, g.queue, g.timer_key;

    RETURN QUERY
        SELECT u.t, u.q, u.k, u.dlq, u.pid
          FROM unnest(v_t, v_q, v_k, v_dlq, v_pid) AS u(t, q, k, dlq, pid);
END;
$$;
