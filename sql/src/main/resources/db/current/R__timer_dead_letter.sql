-- Dead-letter: a timer that failed max_attempts times leaves the staging table for queen.log_dlq.
--
-- queen.timer_dead_letter_v3(p_timers, p_max_attempts) takes rows with named fields
-- [{"tenant_id", "queue", "timer_key", "claim_token"}] (every key present, queen.json_rows_v1; a recurring
-- timer's row adds "plan", its successor, which is staged in the same transaction: R__timer_cadence.sql) and
-- moves the named timers that carry the caller's claim token, with their lease still running, and attempts >=
-- greatest(p_max_attempts, 1), into queen.log_dlq, deleting them from queen.log_timers with a `dead_lettered`
-- audit row (queen.timer_event_v1), in one transaction.
--
-- What the caller decides and what it cannot: which of ITS claimed timers go, never another timer (a row in
-- nobody's hands, or in another sweeper's, is refused: a login that could name any unclaimed row could empty the
-- staging table into the DLQ); a timer that never failed never goes; and what is kept is the row's own payload, in
-- its stored form, never bytes the caller passes (they could be anything). A zstd payload is kept as {"encoding":"zstd+base64",..}: the CLI
-- decompresses it to replay it.
-- Nor the thresholds (R__timer_bounds.sql): a p_max_attempts below the owner's min_attempts, or a
-- recurring row's plan whose maxDeadLettersInRow is below min_dead_letters_in_row (or absent), is refused (22023,
-- naming the setting) for a login the owner's bounds bind; and a recurring row's plan always counts as a dead
-- letter ("deadLetter": true is set here, whatever the caller sent: a plan saying otherwise would reset the run and
-- the series would never end by its dead letters).
--
-- Guarantees:
--  * Only under the caller's live claim: the fail that exhausts a timer keeps its claim (R__timer_fail.sql),
--    and so does the claim of a timer exhausted before a crash; a reschedule or cancel meanwhile is answered
--    too_late, as for any claimed timer. If the lease runs out first, the next claim takes the timer and
--    dead-letters it then.
--  * A DLQ row (queen.log_dlq has no tenant column: the partition scopes it): partition_id = the
--    timer's destination partition, resolved under the timer's OWN tenant and provisioned if missing
--    (queen.timer_destinations_v1); consumer_group '__timer__'; "offset" -1 (never in the log);
--    message_id and transaction_id the timer's (a replay keeps the log's "was it sent?" check
--    meaningful); error the last error; retry_count the attempts spent.
--  * payload as JSON (queen.timer_payload_jsonb_v1): bytes that are not UTF-8 JSON, or are encrypted,
--    are kept as {"encoding":"base64","encrypted":..,"data":..}; a zstd payload as
--    {"encoding":"zstd+base64",..}. Nothing is decrypted, and an encrypted payload is never written in clear.
--  * The event carries producerSub and the trace fields when the timer has them.
--
-- Lock order: queen.log_timers rows in (tenant_id, queue, timer_key) ascending, SKIP LOCKED (full
-- primary-key probes, then addressed by ctid: no plan depends on statistics) -> queen.queues ->
-- queen.log_partitions ascending id (queen.timer_destinations_v1) -> leaves (queen.log_dlq,
-- queen.timer_dlq_keys, queen.timer_audit_outbox). The delete touches rows held since the first statement.
--
--  * Its tenant, queue and timer key go to queen.timer_dlq_keys (V005) under the DLQ row's id, in the
--    same transaction: what `queen-timers dead-letters replay` schedules again (R__timer_dead_letters.sql).
--
-- PRICE: a compressed payload is not readable JSON in queen.log_dlq (the database cannot decompress zstd);
-- the CLI's show and replay decompress it. The DLQ row keeps its partition alive against cleanup (log_partition_dead_v1 refuses a
-- partition with DLQ rows): somebody's unfinished business is not collected. One subtransaction per
-- non-JSON payload for the JSON fallback; one timer_dlq_keys row per dead letter. Replay and drop:
-- `queen-timers dead-letters` (queen.timer_dead_letter_remove_v1).

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

CREATE OR REPLACE FUNCTION queen.timer_dead_letter_v3(p_timers JSONB, p_max_attempts INT)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, dlq_id UUID, partition_id UUID)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    -- The call's rows as aligned arrays, built here in one place, in the call's order.
    a_tenants  UUID[];
    a_queues   TEXT[];
    a_keys     TEXT[];
    a_tokens   UUID[];
    a_plans    JSONB[];
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
    v_binds      BOOLEAN;
    v_min_in_row INT;
BEGIN
    SELECT array_agg(r.tenant_id ORDER BY r.i), array_agg(r.queue ORDER BY r.i), array_agg(r.timer_key ORDER BY r.i),
           array_agg(r.claim_token ORDER BY r.i), array_agg(r.plan ORDER BY r.i)
      INTO a_tenants, a_queues, a_keys, a_tokens, a_plans
      FROM ROWS FROM (jsonb_to_recordset(queen.json_rows_v1('timer_dead_letter_v3 timers', p_timers, '{tenant_id,queue,timer_key,claim_token}'))
                      AS (tenant_id UUID, queue TEXT, timer_key TEXT, claim_token UUID, plan JSONB))
           WITH ORDINALITY AS r(tenant_id, queue, timer_key, claim_token, plan, i);
    IF a_tenants IS NULL THEN
        RETURN;
    END IF;
    -- the owner's thresholds (R__timer_bounds.sql): a refused call touches no row
    PERFORM queen.timer_require_attempts_v1('timer_dead_letter_v3', p_max_attempts);
    SELECT b.binds_caller, b.min_dead_letters_in_row INTO v_binds, v_min_in_row FROM queen.timer_bounds_v1() b;
    IF v_binds AND EXISTS (SELECT 1 FROM unnest(a_plans) p
                            WHERE p IS NOT NULL AND NOT coalesce((p ->> 'maxDeadLettersInRow')::int >= v_min_in_row, false)) THEN
        RAISE EXCEPTION 'timer_dead_letter_v3: a plan''s maxDeadLettersInRow is below % (queen.timer_settings.min_dead_letters_in_row, the owner''s)',
            v_min_in_row USING ERRCODE = '22023', HINT = 'as the owner: UPDATE queen.timer_settings SET min_dead_letters_in_row = ...';
    END IF;

    -- 1. Hold the exhausted rows the caller holds the live claim of (full primary-key probes in a LATERAL subquery).
    -- Lock order: queen.log_timers rows, primary key ascending, SKIP LOCKED (never waits).
    SELECT array_agg(n.ord ORDER BY n.rn), array_agg(l.row_ctid ORDER BY n.rn), array_agg(n.tenant_id ORDER BY n.rn),
           array_agg(n.queue ORDER BY n.rn), array_agg(n.timer_key ORDER BY n.rn), array_agg(l.part ORDER BY n.rn)
      INTO v_ord, v_ctid, v_t, v_q, v_k, v_p
      FROM (SELECT u.*, row_number() OVER (ORDER BY u.tenant_id, u.queue COLLATE "C", u.timer_key COLLATE "C") AS rn
              FROM unnest(a_tenants, a_queues, a_keys) WITH ORDINALITY AS u(tenant_id, queue, timer_key, ord)
             ORDER BY u.tenant_id, u.queue COLLATE "C", u.timer_key COLLATE "C") n
     CROSS JOIN LATERAL (
            SELECT t.ctid AS row_ctid, t."partition" AS part
              FROM queen.log_timers t
             WHERE t.tenant_id = n.tenant_id AND t.queue = n.queue COLLATE "C" AND t.timer_key = n.timer_key COLLATE "C"
               AND t.attempts >= greatest(p_max_attempts, 1)
               AND t.claim_token = a_tokens[n.ord::int]
               AND t.claimed_until > now()
               -- a recurring row needs its plan (its successor, staged in this transaction): without one it stays
               AND (t.recurrence IS NULL OR a_plans[n.ord::int] IS NOT NULL)
               FOR UPDATE OF t SKIP LOCKED) l;
    IF v_ord IS NULL THEN
        RETURN;
    END IF;

    -- 2. Resolve each destination under the timer's own tenant (provision + pre-lock).
    -- Lock order: queen.queues → queen.log_partitions ascending id (R__timer_destinations.sql).
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
        RAISE EXCEPTION 'timer_dead_letter_v3: a destination did not resolve' USING ERRCODE = 'XX000';
    END IF;

    -- 3. The DLQ rows, read from the rows we hold (by TID). Lock order: leaf (queen.log_dlq; its foreign
    --    key share-locks partitions already held).
    INSERT INTO queen.log_dlq (id, partition_id, consumer_group, "offset", message_id, transaction_id,
                               payload, error, retry_count, failed_at)
    SELECT u.dlq, u.pid, '__timer__', -1, t.message_id, t.txn,
           CASE WHEN NOT t.payload_zstd
                    THEN queen.timer_payload_jsonb_v1(t.payload, t.encrypted)
                ELSE jsonb_build_object('encoding', 'zstd+base64', 'encrypted', t.encrypted, 'data', encode(t.payload, 'base64'))
           END,
           t.last_error, t.attempts, now()
      FROM unnest(v_ord, v_ctid, v_pid, v_dlq) AS u(ord, row_ctid, pid, dlq)
     CROSS JOIN LATERAL (SELECT * FROM queen.log_timers x WHERE x.ctid = u.row_ctid) t;
    -- ... and what a DLQ row cannot say, for `queen-timers dead-letters replay`: the tenant and the timer key.
    INSERT INTO queen.timer_dlq_keys (dlq_id, tenant_id, queue, timer_key)
    SELECT u.dlq, u.t, u.q, u.k FROM unnest(v_dlq, v_t, v_q, v_k) AS u(dlq, t, q, k);

    -- 4. Delete (rows held since step 1, by TID) and write `dead_lettered` audit rows (leaf).
    --    A recurring timer's successor is staged after its delete (R__timer_cadence.sql): the series goes on.
    WITH gone AS (
        DELETE FROM queen.log_timers t
         WHERE t.ctid = ANY (v_ctid)
        RETURNING t.ctid AS row_ctid, t AS timer)
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT (g.timer).tenant_id, (g.timer).queue || '/' || (g.timer).timer_key, 'dead_lettered', queen.timer_event_v1(g.timer)
           || CASE WHEN (g.timer).recurrence IS NOT NULL
                   THEN queen.timer_series_next_v1(g.timer, a_plans[u.ord::int] || '{"deadLetter": true}') ELSE '{}'::jsonb END
      FROM gone g
      JOIN unnest(v_ord, v_ctid) AS u(ord, row_ctid) ON u.row_ctid = g.row_ctid
     ORDER BY (g.timer).tenant_id, (g.timer).queue, (g.timer).timer_key;

    RETURN QUERY
        SELECT u.t, u.q, u.k, u.dlq, u.pid
          FROM unnest(v_t, v_q, v_k, v_dlq, v_pid) AS u(t, q, k, dlq, pid);
END;
$$;
