-- V055  bridge_apply_v2: the schedule stores `encrypted` as the bridge decided it (README "Payload
-- encryption").
--
-- Why a new function: bridge_apply_v1 (V028) writes encrypted = FALSE for every timer, because the
-- bridge never encrypted. Now a destination queue with queen.queues.encryption_enabled (read by the
-- bridge, never written) or matching encryption.queues gets its payload sealed in Queen's AES-256-GCM
-- envelope before it reaches this function, and the row must say so: the fire copies the column into
-- frame flag 4 and never decrypts. v2 is v1 with one more per-upsert array, u_encrypted; everything
-- else (the fold in Java, lock order, offsets check-and-set, the wake-up) is v1's, unchanged -- V028's
-- header is the reasoning for all of it.
--
-- v1 is kept, not dropped: a bridge of the previous release still running beside a new one during a
-- rolling restart keeps calling it (and keeps storing clear payloads, as it always did).
--
-- Lock order (as V028): queen.log_timers rows in (tenant_id, queue, timer_key) ascending, then the
-- leaves: queen.timer_audit_outbox (insert only), queen.bridge_offsets (last). queen.queues is not
-- touched here; the bridge's read of encryption_enabled is a plain SELECT that takes no row lock.

CREATE OR REPLACE FUNCTION queen.bridge_apply_v2(
    p_group TEXT, p_topic TEXT[], p_partition INT[], p_expected BIGINT[], p_next BIGINT[],
    u_tenant UUID[], u_queue TEXT[], u_key TEXT[], u_partition TEXT[], u_deliver_ms BIGINT[], u_txn TEXT[],
    u_message_id UUID[], u_payload BYTEA[], u_zstd BOOLEAN[], u_encrypted BOOLEAN[], u_sub TEXT[],
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
                                       payload, payload_zstd, encrypted, producer_sub)
    SELECT u.tenant_id, u.queue, u.timer_key, u.part, timestamptz 'epoch' + u.ms * interval '1 millisecond', u.txn,
           u.message_id, u.payload, u.zstd, u.enc, u.sub
      FROM unnest(u_tenant, u_queue, u_key, u_partition, u_deliver_ms, u_txn, u_message_id, u_payload, u_zstd, u_encrypted, u_sub)
           AS u(tenant_id, queue, timer_key, part, ms, txn, message_id, payload, zstd, enc, sub)
     ORDER BY u.tenant_id, u.queue COLLATE "C", u.timer_key COLLATE "C"
    ON CONFLICT (tenant_id, queue, timer_key) DO UPDATE
       SET "partition" = EXCLUDED."partition", deliver_at = EXCLUDED.deliver_at, txn = EXCLUDED.txn,
           message_id = EXCLUDED.message_id, payload = EXCLUDED.payload, payload_zstd = EXCLUDED.payload_zstd,
           encrypted = EXCLUDED.encrypted, producer_sub = EXCLUDED.producer_sub,
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
