-- V026  The audit outbox (DESIGN.md §7).
--
-- Every outcome (a command's verdict, a fire, a retry, a dead-letter) is written here in the SAME
-- transaction as the change it reports, so "committed" and "will be published" are one fact. A relay
-- (one active per database, under an advisory lock) publishes rows in id order with an idempotent
-- producer and deletes them only after the broker acknowledged them.
--
-- Price: at-least-once. A relay that dies between the broker's ack and its DELETE publishes those rows
-- again on restart. event_id is minted here, once, so a consumer deduplicates on it.
--
-- Per-key order: two events for one timer come from transactions that are serialized by that timer's
-- row lock (or, for verdicts without a row, by the bridge's single consumer of the key's Kafka
-- partition), so the later one is inserted after the earlier one committed and gets a larger id.
--
-- kafka_key is NULL only for a rejected record whose key could not be read. tenant_id picks the audit
-- topic: tenants never share an audit key space (DESIGN.md §8).
--
-- The relay builds the published value as
--   {"eventId", "type", "at", "tenant"} || event
-- so writers put only the fields specific to the event into `event`.

CREATE TABLE IF NOT EXISTS queen.timer_audit_outbox (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id   UUID NOT NULL DEFAULT gen_random_uuid(),
    tenant_id  UUID NOT NULL,
    kafka_key  TEXT,
    type       TEXT NOT NULL CHECK (type IN ('scheduled', 'rescheduled', 'cancelled', 'absent', 'too_late',
                                             'rejected', 'fired', 'retrying', 'dead_lettered')),
    event      JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
