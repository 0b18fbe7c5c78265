-- Tests' clock (docs/testing-with-queen-timers.md): make a queue's staged timers due now, so
-- an integration test of "remind me in 3 days" runs in milliseconds. The fire is not bypassed: this only moves
-- deliver_at; the sweeper claims, fires, audits and deletes the rows as it would have at their time.
--
-- queen.timer_advance_v1(tenant, queue, by): every unclaimed one-shot timer of the queue gets
--   deliver_at = now()                               when by is NULL  (fireDue: everything due now), or
--   deliver_at = deliver_at - by, but not before now() otherwise (advance: the clock moved by `by`; a timer
--                                                     it passes is due now, not "late"),
-- (a row already due keeps its deliver_at),
-- and NOTIFY queen_timers_wake wakes the sweepers at commit (WakeListener). Returns the rows moved: key, txn
-- (the fire of that key with that txn is the one the caller waits for), and whether the row is now visible to
-- the claim (a row backing off after a failed fire keeps its backoff: claimed_until is not touched).
--
-- Left alone, on purpose:
--  * claimed rows (claim_token set): in a sweeper's hands, they fire or fail as they are;
--  * recurring rows (recurrence set): the next occurrence is planned from deliver_at
--    (ClaimedTimer.plan), so a moved occurrence would shift an `every` series and make a cron series deliver
--    the moved instant's occurrence again, under the same txn. A test of a series uses a short `every` rule.
--
-- Granted to no role (db/least-privilege.sql): only the owner (the migrating user) and superusers may call it.
-- It is a test's tool: in production it would make timers fire early.
--
-- Lock order: queen.log_timers rows in (tenant_id, queue, timer_key) ascending, waiting (FOR UPDATE), as the
-- bridge's apply takes them: no deadlock with a bridge; the claim and the fire SKIP LOCKED, so they never wait here.
-- PRICE: rewrites deliver_at, hence visible_at (indexed, never HOT), of every staged row of the queue: one index
-- update per row; the fired event's deliverAt and lateMs are the moved time's.

CREATE OR REPLACE FUNCTION queen.timer_advance_v1(p_tenant UUID, p_queue TEXT, p_by INTERVAL)
RETURNS TABLE (timer_key TEXT, txn TEXT, deliver_at TIMESTAMPTZ, due BOOLEAN)
LANGUAGE plpgsql
VOLATILE
SET search_path = pg_catalog, queen, pg_temp
AS $$
BEGIN
    IF p_by IS NOT NULL AND p_by < interval '0' THEN
        RAISE EXCEPTION 'timer_advance_v1: by must not be negative (got %)', p_by;
    END IF;
    RETURN QUERY
    WITH locked AS (
        SELECT t.tenant_id, t.queue, t.timer_key
          FROM queen.log_timers t
         WHERE t.tenant_id = p_tenant AND t.queue = p_queue COLLATE "C"
           AND t.claim_token IS NULL AND t.recurrence IS NULL
         ORDER BY t.tenant_id, t.queue, t.timer_key
           FOR UPDATE
    )
    UPDATE queen.log_timers t
       SET deliver_at = CASE WHEN p_by IS NULL THEN least(t.deliver_at, now())
                             ELSE greatest(t.deliver_at - p_by, least(t.deliver_at, now())) END,
           updated_at = now()
      FROM locked l
     WHERE t.tenant_id = l.tenant_id AND t.queue = l.queue AND t.timer_key = l.timer_key
    RETURNING t.timer_key::text, t.txn, t.deliver_at, t.visible_at <= now();
    PERFORM pg_notify('queen_timers_wake', '');
END
$$;
