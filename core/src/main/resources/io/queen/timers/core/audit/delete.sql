-- Rows the broker acknowledged. By id list, never by range: an id below the largest published one
-- may belong to a transaction that committed late, and it has not been published yet.
-- Locks: outbox rows only (a leaf of the project lock order).
DELETE FROM queen.timer_audit_outbox WHERE id = ANY(?)
