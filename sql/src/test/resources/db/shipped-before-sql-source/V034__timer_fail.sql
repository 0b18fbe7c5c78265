-- V034  Fail and release (DESIGN.md §6.5): what a sweeper does with claimed rows it did not deliver.
--
-- queen.timer_fail_v1 records a failed fire for the named rows:
--   * only rows that still carry the caller's claim_token are touched. A row whose lease expired and
--     was claimed again belongs to somebody else now; failing it would spend an attempt of a fire
--     that is not ours;
--   * claim_token := NULL, claimed_until := now() + backoff. The row is then NOT in anybody's hands
--     (seed: "claim_token IS NOT NULL AND claimed_until > now()" is the only definition), merely not
--     visible yet: a poisoned timer stays cancellable for its whole backoff. That is the reason the
--     lease is two columns;
--   * transient errors (p_transient: SQLSTATE 40001, 40P01, classes 08/53/57/58, or none, as
--     classified by the sweeper's one classifier) spend no attempt and back off p_transient_backoff
--     (1 s): the data is fine, the moment was not;
--   * permanent errors spend one attempt and back off least(p_backoff_base * 2^attempts, p_backoff_max)
--     with attempts counted BEFORE this failure: 1 s, 2 s, 4 s, 8 s, ... capped at 60 s;
--   * last_error := the error (it names the SQLSTATE); a `retrying` audit row per failed timer. One
--     call records one error for all its rows (a fire fails as a whole); the sweeper groups by error.
-- Returns the failed rows with their new attempts, the retry instant, and `exhausted`
-- (attempts >= p_max_attempts): the sweeper dead-letters those next (V035), in its own transaction,
-- so a reschedule committed in between (which resets attempts) wins.
--
-- queen.timer_release_v1 hands claimed rows back untouched: claim_token := NULL,
-- claimed_until := now(), attempts unchanged, so they are claimable in the very next cycle. Used on
-- graceful shutdown (a sweeper releases only what it claimed: the token must match) and for rows that
-- reached max attempts before a crash and must be dead-lettered instead of fired.
--
-- PRICE: the UPDATE writes claimed_until (hence visible_at): never HOT, like the claim (seed).
-- Both functions skip rows another transaction holds (SKIP LOCKED): the sweeper never waits on a
-- timer row. A row skipped here keeps its token and lease; it becomes visible at lease expiry, spending
-- no attempt. That is the price of never waiting, and it is only paid while a command holds that row.
--
-- Plans: each named row is looked up by its full primary key in a LATERAL subquery, and the UPDATE
-- addresses the rows it holds by ctid (TID scan). Neither depends on table statistics, so a burst that
-- leaves them stale cannot turn a fail into a scan of the whole table per row.
--
-- Lock order (DESIGN.md §8): queen.log_timers rows in (tenant_id, queue, timer_key) ascending,
-- SKIP LOCKED → leaf (queen.timer_audit_outbox). Nothing else.

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
              t.attempts, t.last_error, t.claimed_until
),
audit AS (
    -- Lock order: leaf.
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT f.tenant_id, f.queue || '/' || f.timer_key, 'retrying',
           jsonb_build_object('queue', f.queue, 'timerKey', f.timer_key, 'partition', f."partition",
                              'txn', f.txn, 'messageId', f.message_id, 'deliverAt', f.deliver_at,
                              'attempts', f.attempts, 'error', f.last_error)
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
