-- V040  Moving a bridge group's stored offset on purpose, and only on purpose, with an audit event.
--
-- Why: the bridge never lets Kafka reset a position (auto.offset.reset=none). A stored offset that is
-- out of range -- the topic was recreated, or retention deleted records the group had not applied --
-- stops that partition with an error until an operator decides where it resumes. Jumping to the end
-- on its own would drop every unapplied command, cancels included, without a verdict. The decision is
-- this function, called by `queen-timers offsets set`: it writes the new offset and an `offset_moved`
-- audit event (who, why, from, to) in ONE transaction, so no offset moves without its record.
--
-- A running bridge needs no signal: its next batch on that partition fails the check-and-set of
-- bridge_apply_v1 (the stored offset is no longer the one it sought to), it rolls back and seeks to
-- the stored offsets, which is where the operator put it; a stopped partition re-reads its stored
-- offset while stopped and resumes when it changes.
--
-- Lock order: the offsets row first (FOR UPDATE, to read the offset it replaces), then the outbox
-- (insert only: it waits on nobody). bridge_apply_v1 takes timer rows, the outbox, then offsets; the
-- two share only the offsets row, so they cannot deadlock.
--
-- The event goes to the default tenant's audit stream: an offset belongs to a topic, and which tenant
-- a topic stands for is the bridge's configuration, which the database does not know.
--
-- Since issue 26 this file defines no function or view (docs/decisions.md#one-live-definition-of-every-function):
-- queen.bridge_offset_set_v1 live, once and current, in db/current/R__bridge_offset_set.sql.
-- The text above is the history of why they were made so.

ALTER TABLE queen.timer_audit_outbox DROP CONSTRAINT timer_audit_outbox_type_check; -- V026 named it implicitly: table_column_check
ALTER TABLE queen.timer_audit_outbox ADD CONSTRAINT timer_audit_outbox_type_check
    CHECK (type IN ('scheduled', 'rescheduled', 'cancelled', 'absent', 'too_late',
                    'rejected', 'fired', 'retrying', 'dead_lettered', 'offset_moved'));
