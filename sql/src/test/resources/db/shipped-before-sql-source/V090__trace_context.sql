-- V090  Trace context across the delay (README "Trace context").
--
-- A command record with a W3C traceparent header (either form) keeps its trace until the timer ends:
-- the bridge stores the trace id and the command's span id in the staged row, the fire writes the
-- trace id into the frame (flag 1 of the log format, which nothing filled before), and every audit
-- event of the timer carries "traceId" and "spanId" (hex, as in traceparent): the bridge's verdicts
-- from the command itself, `fired`, `retrying` and `dead_lettered` from the row.
--
-- What it costs, and why this shape:
--   * queen.log_timers gets ONE nullable column, trace_context BYTEA: 16 bytes of trace id then 8 of
--     span id, NULL for a command without a (valid) traceparent. Nullable without a default, so ADD
--     COLUMN is a catalog change (no rewrite), and a timer without a trace stores nothing (a NULL is a
--     bit in the row's null bitmap). One column rather than two: the two ids are one fact (where the
--     trace was when the timer was scheduled) and always travel together. PRICE: the staged row is the
--     contracted table plus this column (StagingTableContractTest pins the contract's 19 columns as
--     they were and this one beside them); a traced timer's row is 25 bytes wider.
--   * Rescheduling replaces it with the new command's context (or clears it): the row is the last
--     command's timer, as it is for txn and payload.
--   * `fired` rows (one per segment, V026/V056) get a third parallel array, fired_traces BYTEA[],
--     aligned with fired[] like fired_subs and NULL when no timer of the segment has a trace -- so a
--     deployment without tracing writes nothing more than before. Same reasoning as V056's
--     fired_subs (a composite type used by a column cannot grow without a rewrite).
--   * New functions where the signature changes (bridge_apply_v3, timer_claim_v3: v2 stays for a
--     process of the previous build during a rolling restart); re-created with the same signature
--     where it does not (timer_fire_v1, timer_fail_v1, timer_dead_letter_v1, the view). Their bodies
--     are V050's, V055's and V056's with only the trace_context lines added; those files' headers keep
--     the reasoning and the lock order, which do not change: trace_context is read from rows already
--     held, and written by the upsert that already writes the row.

ALTER TABLE queen.log_timers ADD COLUMN IF NOT EXISTS trace_context BYTEA;
ALTER TABLE queen.log_timers ADD CONSTRAINT log_timers_trace_context_24_bytes
    CHECK (trace_context IS NULL OR octet_length(trace_context) = 24);

ALTER TABLE queen.timer_audit_outbox ADD COLUMN IF NOT EXISTS fired_traces BYTEA[];
ALTER TABLE queen.timer_audit_outbox ADD CONSTRAINT timer_audit_outbox_fired_traces_aligned
    CHECK (fired_traces IS NULL OR cardinality(fired_traces) = cardinality(fired));

-- {"traceId": <32 hex>, "spanId": <16 hex>} of a stored trace context, '{}' for none: what every event
-- of a traced timer adds (the relay renders the same for `fired`, FiredEvents).
CREATE OR REPLACE FUNCTION queen.timer_trace_fields_v1(p_trace BYTEA)
RETURNS JSONB
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT CASE WHEN p_trace IS NULL THEN '{}'::jsonb
                ELSE jsonb_build_object('traceId', encode(substr(p_trace, 1, 16), 'hex'),
                                        'spanId', encode(substr(p_trace, 17, 8), 'hex')) END
$$;

-- The bridge's write (V055), storing trace_context.
CREATE OR REPLACE FUNCTION queen.bridge_apply_v3(
    p_group TEXT, p_topic TEXT[], p_partition INT[], p_expected BIGINT[], p_next BIGINT[],
    u_tenant UUID[], u_queue TEXT[], u_key TEXT[], u_partition TEXT[], u_deliver_ms BIGINT[], u_txn TEXT[],
    u_message_id UUID[], u_payload BYTEA[], u_zstd BOOLEAN[], u_encrypted BOOLEAN[], u_sub TEXT[], u_trace BYTEA[],
    d_tenant UUID[], d_queue TEXT[], d_key TEXT[],
    o_tenant UUID[], o_key TEXT[], o_type TEXT[], o_event TEXT[],
    p_wake_within INTERVAL)
RETURNS INT
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    advanced INT := 0;
    n INT;
BEGIN
    -- 1. queen.log_timers: deletes of rows locked by bridge_lock_v1, then upserts in key order.
    DELETE FROM queen.log_timers t
     USING unnest(d_tenant, d_queue, d_key) AS d(tenant_id, queue, timer_key)
     WHERE t.tenant_id = d.tenant_id AND t.queue = d.queue AND t.timer_key = d.timer_key;

    INSERT INTO queen.log_timers AS t (tenant_id, queue, timer_key, "partition", deliver_at, txn, message_id,
                                       payload, payload_zstd, encrypted, producer_sub, trace_context)
    SELECT u.tenant_id, u.queue, u.timer_key, u.part, timestamptz 'epoch' + u.ms * interval '1 millisecond', u.txn,
           u.message_id, u.payload, u.zstd, u.enc, u.sub, u.trace
      FROM unnest(u_tenant, u_queue, u_key, u_partition, u_deliver_ms, u_txn, u_message_id, u_payload, u_zstd, u_encrypted, u_sub, u_trace)
           AS u(tenant_id, queue, timer_key, part, ms, txn, message_id, payload, zstd, enc, sub, trace)
     ORDER BY u.tenant_id, u.queue COLLATE "C", u.timer_key COLLATE "C"
    ON CONFLICT (tenant_id, queue, timer_key) DO UPDATE
       SET "partition" = EXCLUDED."partition", deliver_at = EXCLUDED.deliver_at, txn = EXCLUDED.txn,
           message_id = EXCLUDED.message_id, payload = EXCLUDED.payload, payload_zstd = EXCLUDED.payload_zstd,
           encrypted = EXCLUDED.encrypted, producer_sub = EXCLUDED.producer_sub, trace_context = EXCLUDED.trace_context,
           attempts = 0, last_error = NULL, claimed_until = NULL, claim_token = NULL, updated_at = now();

    -- 2. The outbox: one row per record, in Kafka order (ids follow the ORDER BY).
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT o.tenant_id, o.kafka_key, o.type, o.event::jsonb
      FROM unnest(o_tenant, o_key, o_type, o_event) WITH ORDINALITY AS o(tenant_id, kafka_key, type, event, i)
     ORDER BY o.i;

    -- 3. Offsets, last: check-and-set against the offset the bridge sought to.
    UPDATE queen.bridge_offsets b
       SET next_offset = x.next, updated_at = now()
      FROM unnest(p_topic, p_partition, p_expected, p_next) AS x(topic, part, expected, next)
     WHERE b.group_id = p_group AND b.topic = x.topic AND b."partition" = x.part
       AND x.expected IS NOT NULL AND b.next_offset = x.expected;
    GET DIAGNOSTICS n = ROW_COUNT;
    advanced := advanced + n;

    INSERT INTO queen.bridge_offsets (group_id, topic, "partition", next_offset)
    SELECT p_group, x.topic, x.part, x.next
      FROM unnest(p_topic, p_partition, p_expected, p_next) AS x(topic, part, expected, next)
     WHERE x.expected IS NULL
     ORDER BY x.topic, x.part
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS n = ROW_COUNT;
    advanced := advanced + n;

    IF advanced < cardinality(p_topic) THEN
        RETURN cardinality(p_topic) - advanced;
    END IF;

    -- 4. Wake the sweeper at commit when a timer is due within p_wake_within (PostgreSQL's clock).
    IF EXISTS (SELECT 1 FROM unnest(u_deliver_ms) AS ms
                WHERE timestamptz 'epoch' + ms * interval '1 millisecond' <= now() + p_wake_within) THEN
        PERFORM pg_notify('queen_timers_wake', '');
    END IF;
    RETURN 0;
END
$$;

-- The claim (V050), returning trace_context for the frame.
CREATE OR REPLACE FUNCTION queen.timer_claim_v3(p_batch INT, p_lease INTERVAL, p_per_tenant INT, p_max_bytes BIGINT,
                                                p_lone_oversize BOOLEAN)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, "partition" TEXT, deliver_at TIMESTAMPTZ,
               visible_at TIMESTAMPTZ, txn TEXT, message_id UUID, payload BYTEA, payload_zstd BOOLEAN,
               encrypted BOOLEAN, producer_sub TEXT, attempts INT, last_error TEXT,
               claim_token UUID, claimed_until TIMESTAMPTZ, held_bytes BIGINT, trace_context BYTEA)
LANGUAGE sql
VOLATILE
AS $$
WITH candidates AS MATERIALIZED (
    -- Lock order: queen.log_timers rows only, SKIP LOCKED (never waits).
    SELECT c.row_ctid, c.shard, c.tenant_id, c.queue, c.timer_key, c.visible_at, c.held_bytes
      FROM generate_series(0, 63) AS s(shard)
     CROSS JOIN LATERAL (
            SELECT t.ctid AS row_ctid, t.shard, t.tenant_id, t.queue, t.timer_key, t.visible_at,
                   octet_length(t.payload)::bigint + octet_length(t.txn) + 64 AS held_bytes
              FROM queen.log_timers t
             WHERE t.shard = s.shard::smallint
               AND t.visible_at <= now()
             ORDER BY t.visible_at
             LIMIT greatest(ceil(p_batch / 64.0)::int, 8)
               FOR UPDATE OF t SKIP LOCKED) c
),
ranked AS (
    SELECT c.*,
           row_number() OVER (PARTITION BY c.shard, c.tenant_id
                              ORDER BY c.visible_at, c.queue, c.timer_key) AS tenant_rank
      FROM candidates c
),
kept AS (
    SELECT r.row_ctid, r.tenant_id, r.queue, r.timer_key, r.visible_at, r.held_bytes,
           row_number() OVER (PARTITION BY r.tenant_id ORDER BY r.visible_at, r.queue, r.timer_key) AS turn
      FROM ranked r
     WHERE r.tenant_rank <= p_per_tenant
),
by_rows AS MATERIALIZED (
    SELECT k.row_ctid, k.tenant_id, k.queue, k.timer_key, k.visible_at, k.held_bytes,
           row_number() OVER (ORDER BY k.turn, k.visible_at, k.tenant_id, k.queue, k.timer_key) AS pick_order
      FROM kept k
     ORDER BY k.turn, k.visible_at, k.tenant_id, k.queue, k.timer_key
     LIMIT p_batch
),
picked AS MATERIALIZED (
    SELECT b.row_ctid, b.tenant_id, b.queue, b.timer_key, b.visible_at, b.held_bytes
      FROM (SELECT b.*, sum(b.held_bytes) OVER (ORDER BY b.pick_order) AS running FROM by_rows b) b
     WHERE b.running <= p_max_bytes
        OR (b.pick_order = 1 AND p_lone_oversize)
),
claimed AS (
    -- Lock order: rows already held by `candidates`; no new lock is taken. Addressed by ctid (a TID
    -- scan: stable while we hold the row lock), so the plan never depends on table statistics.
    UPDATE queen.log_timers t
       SET claimed_until = now() + p_lease,
           claim_token   = gen_random_uuid()
     WHERE t.ctid = ANY (ARRAY(SELECT p.row_ctid FROM picked p))
    RETURNING t.tenant_id, t.queue, t.timer_key, t."partition", t.deliver_at,
              t.txn, t.message_id, t.payload, t.payload_zstd, t.encrypted, t.producer_sub, t.attempts,
              t.last_error, t.claim_token, t.claimed_until, t.trace_context
)
SELECT c.tenant_id, c.queue, c.timer_key, c."partition", c.deliver_at, p.visible_at,
       c.txn, c.message_id, c.payload, c.payload_zstd, c.encrypted, c.producer_sub, c.attempts,
       c.last_error, c.claim_token, c.claimed_until, p.held_bytes, c.trace_context
  FROM claimed c
  JOIN picked p ON p.tenant_id = c.tenant_id AND p.queue = c.queue AND p.timer_key = c.timer_key
 ORDER BY p.visible_at, c.tenant_id, c.queue, c.timer_key;
$$;

-- The outbox one row per event (V056), with traceId and spanId on fired events.
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
         || CASE WHEN f.producer_sub IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('producerSub', f.producer_sub) END
         || queen.timer_trace_fields_v1(f.trace_context),
       o.created_at
  FROM queen.timer_audit_outbox o
 CROSS JOIN LATERAL ROWS FROM (unnest(o.fired), unnest(o.fired_subs), unnest(o.fired_traces))
       WITH ORDINALITY AS f(event_id, timer_key, txn, message_id, deliver_at, attempts, producer_sub, trace_context, seq)
 WHERE o.fired IS NOT NULL;

-- The fire (V056), writing fired_traces.
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
            RETURNING t.ctid AS row_ctid, t.timer_key, t.txn, t.message_id, t.deliver_at, t.attempts, t.producer_sub, t.trace_context)
        INSERT INTO queen.timer_audit_outbox (tenant_id, type, event, fired, fired_subs, fired_traces)
        SELECT p_tenants[h.seg], 'fired',
               jsonb_build_object('queue', p_queues[h.seg], 'partition', p_partitions[h.seg],
                                  'offset', v_bases[h.seg], 'segmentCreatedAt', v_created[h.seg]),
               array_agg(ROW(gen_random_uuid(), g.timer_key, g.txn, g.message_id, g.deliver_at, g.attempts)::queen.timer_fired_v1
                         ORDER BY h.pos),
               -- V056: the producer subs in the same order, or NULL when no timer of the segment has one
               CASE WHEN bool_or(g.producer_sub IS NOT NULL) THEN array_agg(g.producer_sub ORDER BY h.pos) END,
               -- V090: the trace contexts in the same order, or NULL when no timer of the segment has one
               CASE WHEN bool_or(g.trace_context IS NOT NULL) THEN array_agg(g.trace_context ORDER BY h.pos) END
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

-- A failed fire (V056), retrying events with the trace.
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
              t.attempts, t.last_error, t.claimed_until, t.producer_sub, t.trace_context
),
audit AS (
    -- Lock order: leaf.
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT f.tenant_id, f.queue || '/' || f.timer_key, 'retrying',
           jsonb_build_object('queue', f.queue, 'timerKey', f.timer_key, 'partition', f."partition",
                              'txn', f.txn, 'messageId', f.message_id, 'deliverAt', f.deliver_at,
                              'attempts', f.attempts, 'error', f.last_error)
             || CASE WHEN f.producer_sub IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('producerSub', f.producer_sub) END
             || queen.timer_trace_fields_v1(f.trace_context)
      FROM failed f
     ORDER BY f.tenant_id, f.queue, f.timer_key
)
SELECT f.tenant_id, f.queue, f.timer_key, f.attempts, f.claimed_until, f.attempts >= p_max_attempts
  FROM failed f
 ORDER BY f.tenant_id, f.queue, f.timer_key;
$$;

-- The dead letter (V056), dead_lettered events with the trace.
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
                  t.attempts, t.last_error, t.producer_sub, t.trace_context)
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT g.tenant_id, g.queue || '/' || g.timer_key, 'dead_lettered',
           jsonb_build_object('queue', g.queue, 'timerKey', g.timer_key, 'partition', g."partition",
                              'txn', g.txn, 'messageId', g.message_id, 'deliverAt', g.deliver_at,
                              'attempts', g.attempts, 'error', g.last_error)
             || CASE WHEN g.producer_sub IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('producerSub', g.producer_sub) END
             || queen.timer_trace_fields_v1(g.trace_context)
      FROM gone g
     ORDER BY g.tenant_id, g.queue, g.timer_key;

    RETURN QUERY
        SELECT u.t, u.q, u.k, u.dlq, u.pid
          FROM unnest(v_t, v_q, v_k, v_dlq, v_pid) AS u(t, q, k, dlq, pid);
END;
$$;
