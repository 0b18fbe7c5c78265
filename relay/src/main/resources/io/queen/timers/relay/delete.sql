-- Rows the broker acknowledged, by id, under the token of the read that handed them out (second parameter)
-- (db/current/R__timer_audit_relay.sql: only the holder of the live relay lease, first parameter; only rows its read
-- handed out; the relay's roles may not DELETE from the outbox themselves). Returns the rows deleted.
SELECT queen.timer_audit_delete_v3(?, ?, ?)
