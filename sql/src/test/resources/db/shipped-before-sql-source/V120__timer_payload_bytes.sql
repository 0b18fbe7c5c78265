-- V120  Bounded by real bytes, and a timer that kills its sweeper is a poison like any other.
--
-- 1. queen.log_timers.payload_bytes: the length of the payload as the frame will carry it -- the bytes
--    the bridge had before it compressed them (for a sealed payload, the sealed envelope's length).
--    NULL for rows staged before this migration (the claim then counts the stored bytes, and the
--    sweeper bounds each fire's decompression by the zstd frame's declared size, docs/guarantees.md).
--    Why: V050's claim counted STORED bytes. A burst of 1 MiB payloads of one repeated letter is
--    stored zstd at a few hundred bytes each, so one claim of 512 of them held ~512 MiB once
--    decompressed: OutOfMemoryError at -Xmx256m, the sweeper exited, and the next one claimed the same
--    rows and died the same way. Counting what the JVM will hold needs the raw length, and PostgreSQL
--    cannot decompress zstd, so the bridge writes it beside the row.
--    PRICE: 4 bytes per staged row (an INT beside the contracted columns, not indexed, so an update of
--    it alone could be HOT; nothing updates it alone). ADD COLUMN without a default is a catalog change
--    only: no rewrite of a table holding a million timers. bridge_apply_v4 reads the key when present
--    and does not require it, so a bridge of the previous build writing during a rolling restart
--    stages rows with NULL, which are counted the old way and bounded by the sweeper's own check.
--
-- 2. timer_claim_v3 (same signature as V090's): held_bytes = payload_bytes (else the stored length) +
--    txn + 64; and a claim that finds a row whose previous lease ran out with its token still set --
--    the sweeper that held it died, stalled past the lease, or lost the database before handing it
--    back -- counts that as one attempt and says so in last_error (prefix 'abandoned:'). Without it a
--    timer that kills its process (out of memory, a crash in native code) was claimed into the same
--    death forever: its attempts never moved, so it was never dead-lettered, and it took every other
--    timer of its claim down with it each time. The sweeper fires such suspects in small groups, then
--    alone, and dead-letters one whose attempts reach sweeper.max.attempts without decompressing it.
--    PRICE: a timer held by a sweeper that is killed for an unrelated reason spends one attempt per
--    kill (docs/guarantees.md says how many kills an innocent timer survives). The lease's semantics
--    are unchanged: "in somebody's hands" is still claim_token IS NOT NULL AND claimed_until > now(),
--    and a backing-off row still has claim_token NULL, so a cancel of it still works.
--
-- Lock order: unchanged (V031/V090 for the claim, V028/V110 for the apply).

ALTER TABLE queen.log_timers ADD COLUMN IF NOT EXISTS payload_bytes INT;

CREATE OR REPLACE FUNCTION queen.bridge_apply_v4(
    p_group       TEXT,
    p_offsets     JSONB,
    p_upserts     JSONB,
    p_deletes     JSONB,
    p_events      JSONB,
    p_wake_within INTERVAL)
RETURNS INT
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off  -- V110: the DELETE joins the batch's keys to the table; probe them by key
AS $$
DECLARE
    v_offsets  INT;
    v_advanced INT := 0;
    n          INT;
BEGIN
    p_offsets := queen.json_rows_v1('bridge_apply_v4 offsets', p_offsets, '{topic,partition,expected,next}');
    p_upserts := queen.json_rows_v1('bridge_apply_v4 upserts', p_upserts,
                     '{tenant_id,queue,timer_key,partition,deliver_at_ms,txn,message_id,payload,payload_zstd,encrypted,producer_sub,trace_context}');
    p_deletes := queen.json_rows_v1('bridge_apply_v4 deletes', p_deletes, '{tenant_id,queue,timer_key}');
    p_events  := queen.json_rows_v1('bridge_apply_v4 events', p_events, '{tenant_id,kafka_key,type,event}');
    v_offsets := jsonb_array_length(p_offsets);

    -- 1. queen.log_timers: deletes of rows locked by bridge_lock_v1, then upserts in key order.
    DELETE FROM queen.log_timers t
     USING jsonb_to_recordset(p_deletes) AS d(tenant_id UUID, queue TEXT, timer_key TEXT)
     WHERE t.tenant_id = d.tenant_id AND t.queue = d.queue AND t.timer_key = d.timer_key;

    INSERT INTO queen.log_timers AS t (tenant_id, queue, timer_key, "partition", deliver_at, txn, message_id,
                                       payload, payload_zstd, payload_bytes, encrypted, producer_sub, trace_context)
    SELECT u.tenant_id, u.queue, u.timer_key, u."partition", timestamptz 'epoch' + u.deliver_at_ms * interval '1 millisecond',
           u.txn, u.message_id, decode(u.payload, 'base64'), u.payload_zstd, u.payload_bytes, u.encrypted, u.producer_sub,
           decode(u.trace_context, 'base64')
      FROM jsonb_to_recordset(p_upserts)
           AS u(tenant_id UUID, queue TEXT, timer_key TEXT, "partition" TEXT, deliver_at_ms BIGINT, txn TEXT,
                message_id UUID, payload TEXT, payload_zstd BOOLEAN, payload_bytes INT, encrypted BOOLEAN,
                producer_sub TEXT, trace_context TEXT)
     ORDER BY u.tenant_id, u.queue COLLATE "C", u.timer_key COLLATE "C"
    ON CONFLICT (tenant_id, queue, timer_key) DO UPDATE
       SET "partition" = EXCLUDED."partition", deliver_at = EXCLUDED.deliver_at, txn = EXCLUDED.txn,
           message_id = EXCLUDED.message_id, payload = EXCLUDED.payload, payload_zstd = EXCLUDED.payload_zstd,
           payload_bytes = EXCLUDED.payload_bytes,
           encrypted = EXCLUDED.encrypted, producer_sub = EXCLUDED.producer_sub, trace_context = EXCLUDED.trace_context,
           attempts = 0, last_error = NULL, claimed_until = NULL, claim_token = NULL, updated_at = now();

    -- 2. The outbox: one row per record, in Kafka order (ids follow the ORDER BY).
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT o.tenant_id, o.kafka_key, o.type, o.event
      FROM ROWS FROM (jsonb_to_recordset(p_events) AS (tenant_id UUID, kafka_key TEXT, type TEXT, event JSONB))
           WITH ORDINALITY AS o(tenant_id, kafka_key, type, event, i)
     ORDER BY o.i;

    -- 3. Offsets, last: check-and-set against the offset the bridge sought to.
    UPDATE queen.bridge_offsets b
       SET next_offset = x."next", updated_at = now()
      FROM jsonb_to_recordset(p_offsets) AS x(topic TEXT, "partition" INT, expected BIGINT, "next" BIGINT)
     WHERE b.group_id = p_group AND b.topic = x.topic AND b."partition" = x."partition"
       AND x.expected IS NOT NULL AND b.next_offset = x.expected;
    GET DIAGNOSTICS n = ROW_COUNT;
    v_advanced := v_advanced + n;

    INSERT INTO queen.bridge_offsets (group_id, topic, "partition", next_offset)
    SELECT p_group, x.topic, x."partition", x."next"
      FROM jsonb_to_recordset(p_offsets) AS x(topic TEXT, "partition" INT, expected BIGINT, "next" BIGINT)
     WHERE x.expected IS NULL
     ORDER BY x.topic, x."partition"
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS n = ROW_COUNT;
    v_advanced := v_advanced + n;

    IF v_advanced < v_offsets THEN
        RETURN v_offsets - v_advanced;
    END IF;

    -- 4. Wake the sweeper at commit when a timer is due within p_wake_within (PostgreSQL's clock).
    IF EXISTS (SELECT 1 FROM jsonb_to_recordset(p_upserts) AS u(deliver_at_ms BIGINT)
                WHERE timestamptz 'epoch' + u.deliver_at_ms * interval '1 millisecond' <= now() + p_wake_within) THEN
        PERFORM pg_notify('queen_timers_wake', '');
    END IF;
    RETURN 0;
END
$$;

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
                   coalesce(t.payload_bytes, octet_length(t.payload))::bigint + octet_length(t.txn) + 64 AS held_bytes
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
           claim_token   = gen_random_uuid(),
           -- SET reads the row as it was: a token still set on a visible row is a lease that ran out in a
           -- sweeper's hands (fail and release clear the token), so this claim counts it as one attempt.
           attempts      = t.attempts + CASE WHEN t.claim_token IS NOT NULL THEN 1 ELSE 0 END,
           last_error    = CASE WHEN t.claim_token IS NOT NULL
                                THEN 'abandoned: the lease ran out while a sweeper held this timer (it died, stalled'
                                     || ' past the lease, or lost the database mid-fire); attempt ' || (t.attempts + 1)
                                ELSE t.last_error END
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
