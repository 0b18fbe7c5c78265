-- Lets this relay's lease go at the end of its tenure, after its last sends completed, so a standing-by relay takes it at
-- its next try instead of when it runs out (db/current/R__timer_audit_relay.sql).
SELECT queen.timer_audit_lease_release_v1(?)
