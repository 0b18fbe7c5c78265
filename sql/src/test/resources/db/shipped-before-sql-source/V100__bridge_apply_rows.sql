-- V100  The bridge's write takes rows with named fields (README "Schema"; docs/decisions.md#rows-not-parallel-arrays).
--
-- bridge_apply_v3 (V090) takes 24 positional parameters, 19 of them arrays that line up index for
-- index (u_tenant[i] with u_queue[i] ... with u_trace[i]); a reader finds which array is which only by
-- counting, and the Java side binds them with a running counter. bridge_apply_v4 takes one jsonb
-- array per kind of row -- the offsets, the timers to upsert, the timers to delete, the outbox events --
-- each row an object whose keys are the column names it fills, read with jsonb_to_recordset:
--
--   p_offsets  [{"topic", "partition", "expected" (null: none stored yet), "next"}]
--   p_upserts  [{"tenant_id", "queue", "timer_key", "partition", "deliver_at_ms", "txn", "message_id",
--                "payload" (base64), "payload_zstd", "encrypted", "producer_sub", "trace_context" (base64)}]
--   p_deletes  [{"tenant_id", "queue", "timer_key"}]
--   p_events   [{"tenant_id", "kafka_key", "type", "event" (the audit event, an object)}], in Kafka order
--
-- Every key must be present in every row (a null value is fine where the column is nullable): a row
-- that lacks one -- a field left out or spelt wrong, which jsonb_to_recordset would read as NULL --
-- fails the whole call with SQLSTATE 22023 naming the row and the key (queen.json_rows_v1). Keys
-- beyond the named ones are not looked for.
--
-- Why jsonb and not an array of a composite type: read, and measured. PostgreSQL's JDBC driver cannot
-- bind a composite value, so a composite array would travel as its text literal, built by a
-- hand-written encoder of record-inside-array quoting (bytea as hex, escaped twice) whose fields are
-- positional again on the wire; Jackson writes the jsonb from one small record per row, the names
-- travel with the values, and a wrong name fails loudly here. PRICE, measured 2026-12-03 on
-- PostgreSQL 15 (fsync off, the shared machine at load 29-37), one IngestBench batch -- 1,770
-- upserts of 200-byte payloads and their 1,770 `scheduled` events -- through the whole function,
-- rolled back, alternating with v3 on the same rows: v3 185-270 ms, v4 231-369 ms per batch (+40 to
-- +100 ms, most of it jsonb's parse of ~1.7 MB of text); a composite array read the same rows in
-- 234-272 ms (v3 215-270 in those runs). The end-to-end before/after is in the README ("Ingest
-- benchmark"), and docs/decisions.md#rows-not-parallel-arrays weighs it.
--
-- Everything else is V090's bridge_apply_v3, unchanged: the statements, their order, the lock order
-- (as V028: queen.log_timers rows in (tenant_id, queue, timer_key) ascending -- the rows were locked
-- by bridge_lock_v1 and the upsert inserts in that order --, then the leaves: queen.timer_audit_outbox,
-- insert only, and queen.bridge_offsets, last), the offsets' check-and-set and the wake-up.
--
-- bridge_apply_v1, v2 and v3 are kept, not dropped: a bridge of the previous release still running
-- beside a new one during a rolling restart keeps calling v3 (V055's convention).

-- A jsonb array of rows, returned as it is after checking that every row is an object carrying every
-- key of p_fields. p_what names the caller and the kind of row in the error.
CREATE OR REPLACE FUNCTION queen.json_rows_v1(p_what TEXT, p_rows JSONB, p_fields TEXT[])
RETURNS JSONB
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
    v_row     BIGINT;
    v_missing TEXT[];
BEGIN
    IF p_rows IS NULL OR jsonb_typeof(p_rows) <> 'array' THEN
        RAISE EXCEPTION '%: expected a JSON array of rows, got %', p_what, coalesce(jsonb_typeof(p_rows), 'NULL')
            USING ERRCODE = '22023';
    END IF;
    SELECT e.i, ARRAY(SELECT f FROM unnest(p_fields) AS f WHERE jsonb_typeof(e.r) <> 'object' OR NOT e.r ? f)
      INTO v_row, v_missing
      FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS e(r, i)
     WHERE jsonb_typeof(e.r) <> 'object' OR NOT e.r ?& p_fields
     ORDER BY e.i
     LIMIT 1;
    IF v_row IS NOT NULL THEN
        RAISE EXCEPTION '%: row % (1-based) lacks %', p_what, v_row, array_to_string(v_missing, ', ')
            USING ERRCODE = '22023', HINT = 'every row names every field, with null where it has no value: ' || array_to_string(p_fields, ', ');
    END IF;
    RETURN p_rows;
END;
$$;

CREATE OR REPLACE FUNCTION queen.bridge_apply_v4(
    p_group       TEXT,
    p_offsets     JSONB,
    p_upserts     JSONB,
    p_deletes     JSONB,
    p_events      JSONB,
    p_wake_within INTERVAL)
RETURNS INT
LANGUAGE plpgsql VOLATILE AS $$
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
                                       payload, payload_zstd, encrypted, producer_sub, trace_context)
    SELECT u.tenant_id, u.queue, u.timer_key, u."partition", timestamptz 'epoch' + u.deliver_at_ms * interval '1 millisecond',
           u.txn, u.message_id, decode(u.payload, 'base64'), u.payload_zstd, u.encrypted, u.producer_sub,
           decode(u.trace_context, 'base64')
      FROM jsonb_to_recordset(p_upserts)
           AS u(tenant_id UUID, queue TEXT, timer_key TEXT, "partition" TEXT, deliver_at_ms BIGINT, txn TEXT,
                message_id UUID, payload TEXT, payload_zstd BOOLEAN, encrypted BOOLEAN, producer_sub TEXT,
                trace_context TEXT)
     ORDER BY u.tenant_id, u.queue COLLATE "C", u.timer_key COLLATE "C"
    ON CONFLICT (tenant_id, queue, timer_key) DO UPDATE
       SET "partition" = EXCLUDED."partition", deliver_at = EXCLUDED.deliver_at, txn = EXCLUDED.txn,
           message_id = EXCLUDED.message_id, payload = EXCLUDED.payload, payload_zstd = EXCLUDED.payload_zstd,
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
