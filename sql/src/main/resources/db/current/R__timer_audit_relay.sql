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
