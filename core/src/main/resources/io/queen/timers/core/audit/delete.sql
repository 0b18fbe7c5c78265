-- Rows the broker acknowledged, by id (db/current/R__timer_audit_relay.sql: the relay's roles may not
-- DELETE from the outbox themselves). Returns the rows deleted.
SELECT queen.timer_audit_delete_v1(?)
