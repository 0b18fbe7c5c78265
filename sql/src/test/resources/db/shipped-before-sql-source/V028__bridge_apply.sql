-- V028  The bridge's two statements per poll batch, as set-based functions taking arrays.
--
-- Why functions with arrays: a poll batch holds up to max.poll.records commands. One round trip to
-- lock, one to write, whatever the batch size, is what makes ingest >= 20,000 commands/s on two
-- cores (README "Commands", benchmark); a statement per command pays a round trip and a plan each.
--
-- Why the fold is not here: the verdict of a command depends on the commands before it for the same
-- timer in the same batch (schedule, cancel, schedule -> scheduled, cancelled, scheduled). The bridge
-- folds them in Kafka order in Java, from the state bridge_lock_v1 returns, and bridge_apply_v1
-- writes only each timer's final state: one upsert or one delete per timer, however many commands.
--
-- Lock order (DESIGN §8): queen.log_timers rows first, in (tenant_id, queue, timer_key) ascending
-- (bridge_lock_v1's ORDER BY under FOR UPDATE; the upsert inserts in the same order), then the leaves:
-- queen.timer_audit_outbox (insert only) and queen.bridge_offsets (last). Neither function touches
-- queen.queues or queen.log_partitions: the queue is born at the fire (seed).
--
-- The lock is a plain FOR UPDATE, so the bridge waits for a row a fire or a claim holds for a
-- moment; the sweeper never waits on the bridge (it claims and verifies with SKIP LOCKED).

-- The timers a batch names, locked, with whether each is "in somebody's hands" -- the only
-- definition (seed): claim_token IS NOT NULL AND claimed_until > now(), PostgreSQL's clock. A row in
-- backoff (token NULL, claimed_until in the future) is NOT in anybody's hands: it is cancellable.
-- Rows not returned do not exist; nobody but the owner of the key's Kafka partition creates them.
CREATE OR REPLACE FUNCTION queen.bridge_lock_v1(p_tenant UUID[], p_queue TEXT[], p_key TEXT[])
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, message_id UUID, in_hands BOOLEAN)
LANGUAGE sql VOLATILE AS $$
    SELECT t.tenant_id, t.queue, t.timer_key, t.message_id,
           (t.claim_token IS NOT NULL AND t.claimed_until > now())
      FROM queen.log_timers t
     WHERE (t.tenant_id, t.queue, t.timer_key) IN (SELECT * FROM unnest(p_tenant, p_queue, p_key))
     ORDER BY t.tenant_id, t.queue, t.timer_key
       FOR UPDATE OF t
$$;

-- Writes a folded batch and advances the offsets. Returns the number of Kafka partitions whose
-- check-and-set failed: 0 means applied; anything else means the caller must ROLL BACK (a zombie
-- or a lost commit acknowledgement) and seek to the stored offsets.
--
-- Upsert = the seed's schedule: resets attempts, last_error and the lease (claimed_until,
-- claim_token), so a rescheduled poisoned timer starts afresh. message_id is whatever the bridge
-- passes: kept for a reschedule of a pending timer, new for a timer that did not exist.
-- The wake-up: NOTIFY inside the transaction is delivered at commit and never after a rollback.
CREATE OR REPLACE FUNCTION queen.bridge_apply_v1(
    p_group TEXT, p_topic TEXT[], p_partition INT[], p_expected BIGINT[], p_next BIGINT[],
    u_tenant UUID[], u_queue TEXT[], u_key TEXT[], u_partition TEXT[], u_deliver_ms BIGINT[], u_txn TEXT[],
    u_message_id UUID[], u_payload BYTEA[], u_zstd BOOLEAN[], u_sub TEXT[],
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
           u.message_id, u.payload, u.zstd, FALSE, u.sub
      FROM unnest(u_tenant, u_queue, u_key, u_partition, u_deliver_ms, u_txn, u_message_id, u_payload, u_zstd, u_sub)
           AS u(tenant_id, queue, timer_key, part, ms, txn, message_id, payload, zstd, sub)
     ORDER BY u.tenant_id, u.queue COLLATE "C", u.timer_key COLLATE "C"
    ON CONFLICT (tenant_id, queue, timer_key) DO UPDATE
       SET "partition" = EXCLUDED."partition", deliver_at = EXCLUDED.deliver_at, txn = EXCLUDED.txn,
           message_id = EXCLUDED.message_id, payload = EXCLUDED.payload, payload_zstd = EXCLUDED.payload_zstd,
           encrypted = FALSE, producer_sub = EXCLUDED.producer_sub,
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
