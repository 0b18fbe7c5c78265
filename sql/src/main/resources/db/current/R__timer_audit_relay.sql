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
-- typical wait of a lone timer's `fired` and `scheduled` events (PipelineBench --mode single: p50 94 -> 26 ms,
-- bench/results/2026-12-04/single-*.txt). One NOTIFY queen_timers_audit per inserting statement; PostgreSQL
-- folds a transaction's identical notifications into one, sent at its commit. A statement trigger also fires
-- for an INSERT ... SELECT of no row; telling would need a transition table, which copies every inserted row,
-- so such a transaction costs one relay round that finds nothing. The relay LISTENs on its lock
-- connection while it is active (AuditRelay). Runs with the inserting function's rights (the writers are
-- SECURITY DEFINER functions); needs no grant.
-- PRICE: every commit that writes the outbox now notifies (each bridge batch, each fire, fail and
-- dead-letter; before, only bridge batches with a timer due within bridge.wake.within), and PostgreSQL
-- serializes the commits of notifying transactions cluster-wide (one lock, held through the commit's WAL
-- flush), a Queen broker's notifying commits included. Measured with it: steady 2,000/s, p99 89 ms
-- (bench/results/2026-12-04/steady2000-283b103.txt); and a round of the relay per commit while it keeps up
-- (~180 rounds/s at 2,000 timers/s).
CREATE OR REPLACE FUNCTION queen.timer_audit_wake_v1()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_notify('queen_timers_audit', '');
    RETURN NULL;
END
$$;

-- Created once, never re-created by a later run of this file: a DROP TRIGGER would take ACCESS EXCLUSIVE on
-- the outbox until the whole migration commits, behind any fire in flight and ahead of every writer. A
-- different trigger is a versioned migration's job.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger
                    WHERE tgname = 'timer_audit_outbox_wake' AND tgrelid = 'queen.timer_audit_outbox'::regclass) THEN
        CREATE TRIGGER timer_audit_outbox_wake
            AFTER INSERT ON queen.timer_audit_outbox
            FOR EACH STATEMENT EXECUTE FUNCTION queen.timer_audit_wake_v1();
    END IF;
END
$$;
