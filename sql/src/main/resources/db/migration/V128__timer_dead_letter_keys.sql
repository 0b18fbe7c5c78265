-- V128  Dead letters an operator can replay and drop from the CLI (issue 27, point 4).
--
-- 1. queen.timer_dlq_keys: the tenant, queue and timer key of each dead letter the sweeper writes, by
--    queen.log_dlq id. A DLQ row is Queen's shape (no tenant, no timer key: the partition scopes it), and
--    the key survived only in the `dead_lettered` audit event, which the relay deletes once published: a
--    replay had to find it on the audit topic by hand. Written in the same statement as the DLQ row
--    (queen.timer_dead_letter_v2, queen.timer_fire_refuse_v1), deleted with it
--    (queen.timer_dead_letter_remove_v1). A side table, not a column of queen.log_dlq, because Queen owns
--    that table (README "Schema"). No foreign key to it either: log_dlq has none by design, and a row
--    deleted by hand leaves a harmless orphan that the readers never join to. Dead letters written before
--    V128 have no row: `dead-letters replay` then needs --key (from their dead_lettered event).
-- 2. The outbox accepts `dead_letter_removed`: a dead letter replayed (its timer is staged again, or
--    already fired) or dropped, with the operator's reason and the database's record of who.
--
-- PRICE: one more row (~100 bytes) per dead letter, in the dead-letter's own transaction (a rare path:
-- after sweeper.max.attempts failures). Locks: CREATE TABLE takes none on existing tables; the CHECK is
-- re-created under an ACCESS EXCLUSIVE lock on the outbox and validated by one scan of it (the outbox is
-- drained by the relay: normally a few rows).

CREATE TABLE IF NOT EXISTS queen.timer_dlq_keys (
    dlq_id    UUID PRIMARY KEY,
    tenant_id UUID NOT NULL,
    queue     TEXT NOT NULL,
    timer_key TEXT NOT NULL
);

ALTER TABLE queen.timer_audit_outbox DROP CONSTRAINT timer_audit_outbox_type_check;
ALTER TABLE queen.timer_audit_outbox ADD CONSTRAINT timer_audit_outbox_type_check
    CHECK (type IN ('scheduled', 'rescheduled', 'cancelled', 'absent', 'too_late',
                    'rejected', 'fired', 'retrying', 'dead_lettered', 'offset_moved', 'dead_letter_removed'));
