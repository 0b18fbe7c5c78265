-- The audit relay's one write: deleting the outbox rows the broker acknowledged (issue 24, point 6).
-- It was a direct DELETE; as a function, the relay's roles (queen_bridge, queen_sweeper) need no DELETE on
-- the outbox, so a compromised service cannot empty it wholesale: it can delete only by id, as the relay does.
-- By id list, never by range: an id below the largest published one may belong to a transaction that
-- committed late, and it has not been published yet.
-- Locks: outbox rows only (a leaf of the project lock order). Returns the rows deleted.
-- PRICE: SECURITY DEFINER with a pinned search_path costs a GUC save and restore per call (once per relay
-- round, not per event).
CREATE OR REPLACE FUNCTION queen.timer_audit_delete_v1(p_ids BIGINT[])
RETURNS INT
LANGUAGE sql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
    WITH gone AS (DELETE FROM queen.timer_audit_outbox WHERE id = ANY(p_ids) RETURNING 1)
    SELECT count(*)::int FROM gone
$$;

-- Wakes the active audit relay at the commit of a transaction that wrote the outbox (issue 25): an idle
-- relay otherwise finds a new row only at its next poll (audit.relay.poll.interval, 200 ms), which was the
-- typical wait of a lone timer's `fired` and `scheduled` events. One NOTIFY queen_timers_audit per writing
-- statement; PostgreSQL folds a transaction's identical notifications into one, sent at its commit. The
-- relay LISTENs on its lock connection while it is active (AuditRelay). Runs with the inserting function's
-- rights (the writers are SECURITY DEFINER functions); needs no grant.
-- PRICE: a notification per committing writer of the outbox (each bridge batch, each fire): PostgreSQL
-- serializes the commits of notifying transactions on one lock, which the bridge's queen_timers_wake already
-- takes at the same commits; and a replaced trigger is re-created here with a brief ACCESS EXCLUSIVE lock
-- on the outbox at migrate.
CREATE OR REPLACE FUNCTION queen.timer_audit_wake_v1()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_notify('queen_timers_audit', '');
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS timer_audit_outbox_wake ON queen.timer_audit_outbox;
CREATE TRIGGER timer_audit_outbox_wake
    AFTER INSERT ON queen.timer_audit_outbox
    FOR EACH STATEMENT EXECUTE FUNCTION queen.timer_audit_wake_v1();
