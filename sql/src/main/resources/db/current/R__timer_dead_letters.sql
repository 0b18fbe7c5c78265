-- Operators' dead letters: list, show, replay, drop (`queen-timers dead-letters`).
--
-- queen.timer_dead_letters_v1(tenant, queue, id, limit): the sweeper's dead letters (queen.log_dlq rows of
-- consumer_group '__timer__'), oldest first, with what their DLQ row cannot say (tenant from the
-- partition's queue; timer key from queen.timer_dlq_keys, NULL when that row is gone: deleted by hand). Each
-- filter NULL = any; the limit is clamped to 1..1000.
--
-- queen.timer_dead_letter_remove_v1(id, how, reason, timer_key, txn_hash, verdict_event, trace_id,
-- span_id, client_label): deletes one dead letter and writes a `dead_letter_removed` audit event (how,
-- reason, who) in ONE transaction, so no dead letter leaves without its record.
--   how 'dropped':  on the operator's word (the message is given up).
--   how 'replayed': only when the database sees the replay: a timer of the dead letter's tenant, queue and
--                   key staged with its txn ('pending'), or the txn's hash (queen.log_txns, XXH3-128 as the
--                   log writes it; the caller computes it) in the dead letter's partition since it was
--                   dead-lettered ('fired'). Otherwise it refuses (55000) and the dead letter stays: the
--                   CLI calls it after the schedule's verdict, so a lost command or a rejected one never
--                   removes a dead letter. The event names the verdict's eventId and carries the replay
--                   command's trace, which the `scheduled` verdict carries too: the two are joined.
-- Guarantees: the actor is the database's (queen.session_actor_v1); the event goes to the dead letter's
-- tenant; a dead letter another call removed first is 'not there' (P0002), so two replays remove it once.
--
-- Lock order: the queen.log_dlq row (FOR UPDATE), then plain reads (queen.log_timers, queen.log_txns),
-- then leaves (queen.timer_dlq_keys, queen.timer_audit_outbox). The sweeper only inserts DLQ rows: no
-- cycle. PRICE: none on the hot path; the list scans the sweeper's DLQ rows (a DLQ is small, and it is
-- an operator's call); the 'fired' check reads the partition's log_txns rows since the dead letter.

CREATE OR REPLACE FUNCTION queen.timer_dead_letters_v1(p_tenant UUID, p_queue TEXT, p_id UUID, p_limit INT)
RETURNS TABLE (id UUID, tenant_id UUID, queue TEXT, "partition" TEXT, timer_key TEXT, txn TEXT, message_id UUID,
               payload JSONB, error TEXT, attempts INT, failed_at TIMESTAMPTZ)
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
STABLE
AS $$
    -- Lock order: none (read only).
    SELECT d.id, q.tenant_id, q.name::text, p.name, k.timer_key, d.transaction_id, d.message_id,
           d.payload, d.error, d.retry_count, d.failed_at
      FROM queen.log_dlq d
      JOIN queen.log_partitions p ON p.id = d.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
      LEFT JOIN queen.timer_dlq_keys k ON k.dlq_id = d.id
     WHERE d.consumer_group = '__timer__'
       AND (p_id IS NULL OR d.id = p_id)
       AND (p_tenant IS NULL OR q.tenant_id = p_tenant)
       AND (p_queue IS NULL OR q.name = p_queue)
     ORDER BY d.failed_at, d.id
     LIMIT greatest(1, least(coalesce(p_limit, 100), 1000))
$$;

CREATE OR REPLACE FUNCTION queen.timer_dead_letter_remove_v1(p_id UUID, p_how TEXT, p_reason TEXT, p_timer_key TEXT,
                                                             p_txn_hash BYTEA, p_verdict_event UUID, p_trace_id TEXT,
                                                             p_span_id TEXT, p_client_label TEXT)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, state TEXT)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
#variable_conflict use_column
DECLARE
    d      RECORD;
    v_key  TEXT;
    v_state TEXT;
BEGIN
    IF p_reason IS NULL OR btrim(p_reason) = '' THEN
        RAISE EXCEPTION 'a dead letter is removed with a reason' USING ERRCODE = '22023';
    END IF;
    IF p_how IS NULL OR p_how NOT IN ('replayed', 'dropped') THEN
        RAISE EXCEPTION 'how must be replayed or dropped, not %', p_how USING ERRCODE = '22023';
    END IF;
    SELECT x.id, x.partition_id, x.transaction_id, x.message_id, x.error, x.retry_count, x.failed_at,
           q.tenant_id, q.name::text AS queue, p.name AS part, k.timer_key
      INTO d
      FROM queen.log_dlq x
      JOIN queen.log_partitions p ON p.id = x.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
      LEFT JOIN queen.timer_dlq_keys k ON k.dlq_id = x.id
     WHERE x.id = p_id AND x.consumer_group = '__timer__'
       FOR UPDATE OF x;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no dead letter %', p_id USING ERRCODE = 'P0002';
    END IF;
    IF d.timer_key IS NOT NULL AND p_timer_key IS NOT NULL AND d.timer_key <> p_timer_key THEN
        RAISE EXCEPTION 'dead letter % is timer %/%, not %', p_id, d.queue, d.timer_key, p_timer_key USING ERRCODE = '22023';
    END IF;
    v_key := coalesce(d.timer_key, p_timer_key);
    IF p_how = 'replayed' THEN
        IF v_key IS NULL THEN
            RAISE EXCEPTION 'dead letter % has no recorded timer key (its queen.timer_dlq_keys row is gone): name it (--key, from its dead_lettered event)', p_id
                USING ERRCODE = '22023';
        END IF;
        IF EXISTS (SELECT 1 FROM queen.log_timers t
                    WHERE t.tenant_id = d.tenant_id AND t.queue = d.queue COLLATE "C" AND t.timer_key = v_key COLLATE "C"
                      AND t.txn IS NOT DISTINCT FROM d.transaction_id) THEN
            v_state := 'pending';
        ELSIF p_txn_hash IS NOT NULL AND length(p_txn_hash) = 16 AND EXISTS (
                SELECT 1 FROM queen.log_txns l
                 CROSS JOIN LATERAL generate_series(0, length(l.hashes) / 16 - 1) AS j
                 WHERE l.partition_id = d.partition_id AND l.created_at >= d.failed_at
                   AND substring(l.hashes FROM j * 16 + 1 FOR 16) = p_txn_hash) THEN
            v_state := 'fired';
        ELSE
            RAISE EXCEPTION 'refused: dead letter % is not replayed yet: no timer %/% of tenant % is staged with txn %, and the txn is not in partition % since %',
                p_id, d.queue, v_key, d.tenant_id, d.transaction_id, d.part, d.failed_at USING ERRCODE = '55000';
        END IF;
    END IF;
    DELETE FROM queen.log_dlq x WHERE x.id = p_id;
    DELETE FROM queen.timer_dlq_keys k WHERE k.dlq_id = p_id;
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    VALUES (d.tenant_id, d.queue || '/' || coalesce(v_key, ''), 'dead_letter_removed',
            jsonb_strip_nulls(jsonb_build_object(
                'deadLetterId', p_id, 'queue', d.queue, 'timerKey', v_key, 'partition', d.part,
                'txn', d.transaction_id, 'messageId', d.message_id, 'error', d.error, 'attempts', d.retry_count,
                'failedAt', d.failed_at, 'how', p_how, 'state', v_state, 'verdictEventId', p_verdict_event,
                'traceId', p_trace_id, 'spanId', p_span_id, 'reason', p_reason))
            || jsonb_build_object('by', queen.session_actor_v1(), 'clientLabel', p_client_label));
    RETURN QUERY SELECT d.tenant_id, d.queue, v_key, v_state;
END
$$;
