-- Fail and release: what a sweeper does with claimed rows it did not deliver.
--
-- queen.timer_fail_v2 and queen.timer_release_v2 take rows with named fields
-- [{"tenant_id", "queue", "timer_key", "claim_token"}] (every key present, queen.json_rows_v1), and hold
-- them through queen.timer_hold_claimed_v2, the one definition of "the caller's claimed rows, locked".
--
-- Fail guarantees:
--  * only rows that still carry the caller's claim_token are touched: a row reclaimed after its lease
--    expired belongs to somebody else, and failing it would spend an attempt of a fire that is not ours;
--  * claim_token := NULL, claimed_until := now() + backoff: the row is then NOT in anybody's hands,
--    merely not visible yet, so a poisoned timer stays cancellable for its whole backoff; except a row
--    this failure exhausts (attempts >= p_max_attempts), which keeps the caller's claim and lease so that
--    the caller can dead-letter it (queen.timer_dead_letter_v3 takes only rows under the caller's live
--    claim): a reschedule or cancel in between is answered too_late;
--  * transient errors (p_transient, as the sweeper's one classifier says: 40001, 40P01, classes
--    08/53/57/58, or none) spend no attempt and back off p_transient_backoff; permanent errors spend one
--    attempt and back off least(p_backoff_base * 2^attempts, p_backoff_max), attempts counted BEFORE
--    this failure;
--  * the backoffs and p_max_attempts are the caller's only within the owner's bounds (queen.timer_settings, V006;
--    R__timer_bounds.sql): a transient backoff beyond max_transient_backoff (a due timer hidden for a century
--    without an attempt spent), a backoff beyond max_backoff or a max attempts below min_attempts (a timer exhausted
--    by one fake failure) is refused, 22023 naming the setting, before any row is touched;
--  * last_error := the error; a `retrying` audit row per failed timer (with producerSub and trace
--    fields when the timer has them). Returns the new attempts, the retry instant and `exhausted`
--    (attempts >= p_max_attempts): the sweeper dead-letters those next, in its own transaction, under the
--    claim this function left it. PRICE: a reschedule in that window is too_late instead of winning.
-- Release hands claimed rows back untouched (claim_token := NULL, claimed_until := now(), attempts
-- unchanged), claimable in the very next cycle: graceful shutdown, and rows that reached max attempts
-- before a crash. Only the rows whose token matches.
--
-- Lock order: queen.log_timers rows in (tenant_id, queue, timer_key) ascending, FOR UPDATE (waits, see
-- below) -> leaf (queen.timer_audit_outbox). Nothing else. Each row is found by its full primary key (LATERAL) and
-- updated by ctid, so no plan depends on table statistics.
--
-- PRICE: the UPDATE writes claimed_until (hence visible_at): never HOT, like the claim. Fail, release and
-- hold-alone WAIT for a row another transaction holds (bounded by sweeper.lock.timeout; a timeout is
-- transient, and the cycle hands the rows back next time): the row carries the caller's token, so what can
-- hold it is a bridge batch answering a reschedule or cancel `too_late`, or another sweeper's claim or fire
-- statement that met it, for the length of that statement. SKIP LOCKED here would leave such a row leased until
-- its lease ran out: a lease late, with a death counted against it (CrashIT caught a hand-back that skipped a row a
-- concurrent claim had just locked). The claim and the fire still
-- never wait. No deadlock: every waiter here and the bridge take timer rows in the same key order, and the
-- claim and the fire, which take them in another order, never wait for one.

-- The named rows that still carry the caller's claim token, locked, as TIDs for the caller's UPDATE.
-- Lock order: queen.log_timers rows, primary key ascending ("C" collation), FOR UPDATE (waits); each row found
-- by its full primary key in a LATERAL subquery, so no plan depends on statistics.
CREATE OR REPLACE FUNCTION queen.timer_hold_claimed_v2(p_what TEXT, p_timers JSONB)
RETURNS SETOF TID
LANGUAGE sql
VOLATILE
AS $$
    SELECT l.row_ctid
      FROM (SELECT n.* FROM jsonb_to_recordset(queen.json_rows_v1(p_what, p_timers, '{tenant_id,queue,timer_key,claim_token}'))
                            AS n(tenant_id UUID, queue TEXT, timer_key TEXT, claim_token UUID)
             ORDER BY n.tenant_id, n.queue COLLATE "C", n.timer_key COLLATE "C") n
     CROSS JOIN LATERAL (
            SELECT t.ctid AS row_ctid
              FROM queen.log_timers t
             WHERE t.tenant_id = n.tenant_id AND t.queue = n.queue COLLATE "C" AND t.timer_key = n.timer_key COLLATE "C"
               AND t.claim_token = n.claim_token
               FOR UPDATE OF t) l
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
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
VOLATILE
AS $$
-- the owner's bounds first (R__timer_bounds.sql): a refused call touches no row
SELECT queen.timer_require_backoffs_v1('timer_fail_v2', p_transient_backoff, p_backoff_base, p_backoff_max);
SELECT queen.timer_require_attempts_v1('timer_fail_v2', p_max_attempts);
WITH held AS MATERIALIZED (
    -- Lock order: queen.log_timers rows, primary key ascending, FOR UPDATE, waits (timer_hold_claimed_v2).
    SELECT h AS row_ctid FROM queen.timer_hold_claimed_v2('timer_fail_v2 timers', p_timers) h
),
failed AS (
    -- Lock order: rows held by `held` (by TID). A row this failure exhausts keeps the caller's claim, lease
    -- unchanged: queen.timer_dead_letter_v3 moves only rows under the caller's live claim.
    UPDATE queen.log_timers t
       SET claim_token   = CASE WHEN t.attempts + CASE WHEN p_transient THEN 0 ELSE 1 END >= p_max_attempts
                                THEN t.claim_token END,
           claimed_until = CASE WHEN t.attempts + CASE WHEN p_transient THEN 0 ELSE 1 END >= p_max_attempts
                                THEN t.claimed_until
                                ELSE now() + CASE WHEN p_transient THEN p_transient_backoff
                                                  ELSE least(p_backoff_base * power(2, least(t.attempts, 30)), p_backoff_max) END END,
           attempts      = t.attempts + CASE WHEN p_transient THEN 0 ELSE 1 END,
           last_error    = p_error
     WHERE t.ctid = ANY (ARRAY(SELECT h.row_ctid FROM held h))
    RETURNING t AS timer
),
audit AS (
    -- Lock order: leaf.
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT (f.timer).tenant_id, (f.timer).queue || '/' || (f.timer).timer_key, 'retrying', queen.timer_event_v1(f.timer)
      FROM failed f
     ORDER BY (f.timer).tenant_id, (f.timer).queue, (f.timer).timer_key
)
SELECT (f.timer).tenant_id, (f.timer).queue, (f.timer).timer_key, (f.timer).attempts, (f.timer).claimed_until,
       (f.timer).attempts >= p_max_attempts
  FROM failed f
 ORDER BY (f.timer).tenant_id, (f.timer).queue, (f.timer).timer_key;
$$;

CREATE OR REPLACE FUNCTION queen.timer_release_v2(p_timers JSONB)
RETURNS INT
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
VOLATILE
AS $$
-- Lock order: queen.log_timers rows, primary key ascending, FOR UPDATE, waits (the ARRAY is computed once,
-- before the UPDATE, which then touches only the rows it holds, by TID).
WITH released AS (
    UPDATE queen.log_timers t
       SET claim_token = NULL, claimed_until = now()
     WHERE t.ctid = ANY (ARRAY(SELECT queen.timer_hold_claimed_v2('timer_release_v2 timers', p_timers)))
    RETURNING 1
)
SELECT count(*)::int FROM released;
$$;

-- Marks the caller's claimed rows [{"tenant_id", "queue", "timer_key", "claim_token"}] as fired alone: the
-- sweeper calls it for a suspect it is about to fire with nothing else of its process in hand, so that if
-- the lease runs out in its hands the next claim blames this timer (one attempt) instead of merely
-- counting a death. Returns the rows marked (a row reclaimed by another sweeper is not ours: skipped).
-- Lock order: queen.log_timers rows, primary key ascending, FOR UPDATE, waits (timer_hold_claimed_v2).
-- PRICE: one statement per suspect fired alone; held_alone is not indexed, but the row's claimed_until
-- is unchanged, so the update can be HOT.
CREATE OR REPLACE FUNCTION queen.timer_hold_alone_v1(p_timers JSONB)
RETURNS INT
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
VOLATILE
AS $$
WITH marked AS (
    UPDATE queen.log_timers t
       SET held_alone = TRUE
     WHERE t.ctid = ANY (ARRAY(SELECT h FROM queen.timer_hold_claimed_v2('timer_hold_alone_v1 timers', p_timers) h))
    RETURNING 1
)
SELECT count(*)::int FROM marked;
$$;
