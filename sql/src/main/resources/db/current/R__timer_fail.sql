-- Fail and release: what a sweeper does with claimed rows it did not deliver.
--
-- queen.timer_fail_v2 and queen.timer_release_v2 take rows with named fields
-- [{"tenant_id", "queue", "timer_key", "claim_token"}] (every key present, queen.json_rows_v1) and hand
-- them to queen.timer_fail_v1 / queen.timer_release_v1 as aligned arrays built in one place; the v1
-- bodies are the behaviour and no process calls them directly. The rows are few (a failed fire, a
-- shutdown), so the extra call costs nothing measurable.
--
-- Fail guarantees:
--  * only rows that still carry the caller's claim_token are touched: a row reclaimed after its lease
--    expired belongs to somebody else, and failing it would spend an attempt of a fire that is not ours;
--  * claim_token := NULL, claimed_until := now() + backoff: the row is then NOT in anybody's hands,
--    merely not visible yet, so a poisoned timer stays cancellable for its whole backoff;
--  * transient errors (p_transient, as the sweeper's one classifier says: 40001, 40P01, classes
--    08/53/57/58, or none) spend no attempt and back off p_transient_backoff; permanent errors spend one
--    attempt and back off least(p_backoff_base * 2^attempts, p_backoff_max), attempts counted BEFORE
--    this failure;
--  * last_error := the error; a `retrying` audit row per failed timer (with producerSub and trace
--    fields when the timer has them). Returns the new attempts, the retry instant and `exhausted`
--    (attempts >= p_max_attempts): the sweeper dead-letters those next, in its own transaction, so a
--    reschedule committed in between wins.
-- Release hands claimed rows back untouched (claim_token := NULL, claimed_until := now(), attempts
-- unchanged), claimable in the very next cycle: graceful shutdown, and rows that reached max attempts
-- before a crash. Only the rows whose token matches.
--
-- Lock order: queen.log_timers rows in (tenant_id, queue, timer_key) ascending, SKIP LOCKED -> leaf
-- (queen.timer_audit_outbox). Nothing else. Each row is found by its full primary key (LATERAL) and
-- updated by ctid, so no plan depends on table statistics.
--
-- PRICE: the UPDATE writes claimed_until (hence visible_at): never HOT, like the claim. A row another
-- transaction holds is skipped (the sweeper never waits on a timer row): it keeps its token and becomes
-- visible at lease expiry, spending no attempt.

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

CREATE OR REPLACE FUNCTION queen.timer_release_v1(p_tenants UUID[], p_queues TEXT[], p_keys TEXT[], p_tokens UUID[])
RETURNS INT
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
released AS (
    -- Lock order: rows held by `held` (by TID).
    UPDATE queen.log_timers t
       SET claim_token = NULL,
           claimed_until = now()
     WHERE t.ctid = ANY (ARRAY(SELECT h.row_ctid FROM held h))
    RETURNING 1
)
SELECT count(*)::int FROM released;
$$;

CREATE OR REPLACE FUNCTION queen.timer_fail_v2(
    p_timers            JSONB,
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
    WITH t AS MATERIALIZED (
        SELECT r.tenant_id, r.queue, r.timer_key, r.claim_token, r.i
          FROM ROWS FROM (jsonb_to_recordset(queen.json_rows_v1('timer_fail_v2 timers', p_timers, '{tenant_id,queue,timer_key,claim_token}'))
                          AS (tenant_id UUID, queue TEXT, timer_key TEXT, claim_token UUID))
               WITH ORDINALITY AS r(tenant_id, queue, timer_key, claim_token, i))
    SELECT f.* FROM queen.timer_fail_v1(ARRAY(SELECT t.tenant_id FROM t ORDER BY t.i),
                                        ARRAY(SELECT t.queue FROM t ORDER BY t.i),
                                        ARRAY(SELECT t.timer_key FROM t ORDER BY t.i),
                                        ARRAY(SELECT t.claim_token FROM t ORDER BY t.i),
                                        p_error, p_transient, p_transient_backoff, p_backoff_base, p_backoff_max,
                                        p_max_attempts) f
$$;

CREATE OR REPLACE FUNCTION queen.timer_release_v2(p_timers JSONB)
RETURNS INT
LANGUAGE sql
VOLATILE
AS $$
    WITH t AS MATERIALIZED (
        SELECT r.tenant_id, r.queue, r.timer_key, r.claim_token, r.i
          FROM ROWS FROM (jsonb_to_recordset(queen.json_rows_v1('timer_release_v2 timers', p_timers, '{tenant_id,queue,timer_key,claim_token}'))
                          AS (tenant_id UUID, queue TEXT, timer_key TEXT, claim_token UUID))
               WITH ORDINALITY AS r(tenant_id, queue, timer_key, claim_token, i))
    SELECT queen.timer_release_v1(ARRAY(SELECT t.tenant_id FROM t ORDER BY t.i),
                                  ARRAY(SELECT t.queue FROM t ORDER BY t.i),
                                  ARRAY(SELECT t.timer_key FROM t ORDER BY t.i),
                                  ARRAY(SELECT t.claim_token FROM t ORDER BY t.i))
$$;
