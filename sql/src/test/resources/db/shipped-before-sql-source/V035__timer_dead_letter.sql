-- V035  Dead-letter (DESIGN.md §6.5): a timer that failed max_attempts times leaves the staging table.
--
-- queen.timer_dead_letter_v1 moves the named timers that have attempts >= p_max_attempts and NO claim
-- token into queen.log_dlq and deletes them from queen.log_timers, with a `dead_lettered` audit row,
-- in one transaction.
--
-- Why a step of its own, after the fail and in another transaction: a reschedule that lands between
-- the fail and the dead-letter resets attempts (the command side owns that column); this function then
-- finds attempts < max and leaves the row alone. The reschedule wins, as it must: the user changed the
-- timer after it broke. A row with a token is in somebody's hands (or was, until its lease expired) and
-- is not ours to move either.
--
-- What a DLQ row means (queen.log_dlq has no tenant column: the partition scopes it):
--   partition_id    the timer's destination partition, resolved under the timer's OWN tenant and
--                   provisioned if missing (same path as the fire, V032): tenants never share a DLQ row;
--   consumer_group  '__timer__': no consumer group failed it, the fire did;
--   "offset"        -1: the message never entered the log, so it has no offset;
--   message_id, transaction_id  the timer's message id and fixed txn (replay with the same txn, and the
--                   log's "was it sent?" check stays meaningful);
--   payload         the payload as JSON. The sweeper passes the decompressed bytes it claimed
--                   (p_payloads); bytes that are not UTF-8 JSON (or encrypted) are kept as
--                   {"encoding":"base64","encrypted":..,"data":..}; a zstd payload with no decompressed
--                   bytes given as {"encoding":"zstd+base64",..}. Nothing is decrypted;
--   error           the last error; retry_count the attempts spent.
-- Replay: schedule a new timer with the same queue, partition, txn and payload (or push it directly);
-- then delete the DLQ row.
--
-- PRICE: the DLQ row keeps its partition alive against cleanup (log_partition_dead_v1 refuses a
-- partition with DLQ rows, and the foreign key has no cascade): somebody's unfinished business must
-- not be collected. One subtransaction per call for the JSON fallback of each non-JSON payload.
--
-- Plans: rows are found by full primary-key probes (LATERAL) and then addressed by ctid, so no step
-- depends on table statistics.
--
-- Lock order (DESIGN.md §8): queen.log_timers rows in (tenant_id, queue, timer_key) ascending, SKIP
-- LOCKED → queen.queues → queen.log_partitions ascending id (V032) → leaves (queen.log_dlq,
-- queen.timer_audit_outbox). The delete touches rows held since the first statement.

CREATE OR REPLACE FUNCTION queen.timer_payload_jsonb_v1(p_payload BYTEA, p_encrypted BOOLEAN)
RETURNS JSONB
LANGUAGE plpgsql
IMMUTABLE
AS $$
BEGIN
    IF NOT p_encrypted THEN
        BEGIN
            RETURN convert_from(p_payload, 'UTF8')::jsonb;
        EXCEPTION WHEN data_exception THEN
            -- not UTF-8, or not JSON: fall through to the lossless form
        END;
    END IF;
    RETURN jsonb_build_object('encoding', 'base64', 'encrypted', p_encrypted, 'data', encode(p_payload, 'base64'));
END;
$$;

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
                  t.attempts, t.last_error)
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT g.tenant_id, g.queue || '/' || g.timer_key, 'dead_lettered',
           jsonb_build_object('queue', g.queue, 'timerKey', g.timer_key, 'partition', g."partition",
                              'txn', g.txn, 'messageId', g.message_id, 'deliverAt', g.deliver_at,
                              'attempts', g.attempts, 'error', g.last_error)
      FROM gone g
     ORDER BY g.tenant_id, g.queue, g.timer_key;

    RETURN QUERY
        SELECT u.t, u.q, u.k, u.dlq, u.pid
          FROM unnest(v_t, v_q, v_k, v_dlq, v_pid) AS u(t, q, k, dlq, pid);
END;
$$;
