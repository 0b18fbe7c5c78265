-- Takes the audit relay lease, or renews this relay's own (the parameter: its token, or NULL), for the owner's
-- queen.timer_settings.relay_lease (db/current/R__timer_audit_relay.sql: only the relay's roles may call it). No row:
-- another relay holds it. lease_ms is the lease's length: the relay counts it from before this call was sent.
SELECT token, (extract(epoch FROM lease) * 1000)::bigint AS lease_ms FROM queen.timer_audit_lease_v1(?)
