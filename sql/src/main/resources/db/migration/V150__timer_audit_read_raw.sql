-- V150  The relay renders the audit events it reads (issue 48): queen.timer_audit_read_v2 (db/current/
-- R__timer_audit_relay.sql) returns each event's raw columns, and core's AuditEventValue renders the Kafka value in
-- Java. Its predecessor queen.timer_audit_read_v1 built one jsonb per fired timer and printed it, about 100 us of
-- PostgreSQL's time per event in issue 48's profile. v1 is dropped at once, not a release later (the rule of
-- docs/decisions.md#a-superseded-function-is-dropped-one-release-after-nothing-calls-it): it was added by V134 in the
-- same unreleased round, so no released relay calls it.
--
-- PRICE: none at run time. Locks: an exclusive lock on that function only.

DROP FUNCTION IF EXISTS queen.timer_audit_read_v1(UUID[], INT, INT);
