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
--
-- `fired` events are the exception: ONE row per fired segment, not per timer. The row's `event` holds
-- what its timers share ({"queue", "partition", "offset" of the segment's first frame,
-- "segmentCreatedAt"}) and `fired` holds one element per timer in frame order, each with its own
-- event_id minted here. The relay expands the row into one Kafka event per timer (key
-- "<queue>/<timerKey>", offset = offset + position, lateMs = segmentCreatedAt - deliverAt) and renders
-- them in Java. Why: a row per timer cost the fire about half its time in FireBench (an identity value,
-- a random event_id, a jsonb build, a heap tuple and a primary-key entry per timer, inside the
-- transaction that holds the destination partitions), and the relay paid a fetch and a delete per
-- timer again. A segment row costs one of each per segment plus an array element per timer.
-- PRICE: two shapes of row in one table; whoever reads the outbox directly must expand `fired`,
-- which queen.timer_audit_events (below) does, and the relay's backlog gauge counts rows, not events.
-- Per-key order is unchanged: a timer has one `fired` event, written after everything before it
-- committed, and the relay publishes a row's events in frame order before the next row's.
--
-- Since issue 26 this file defines no function or view (docs/decisions.md#one-live-definition-of-every-function):
-- queen.timer_audit_events live, once and current, in db/current/R__timer_audit_events.sql.
-- The text above is the history of why they were made so.

-- One fired timer of a `fired` segment row (see above).
CREATE TYPE queen.timer_fired_v1 AS (
    event_id   UUID,
    timer_key  TEXT,
    txn        TEXT,
    message_id UUID,
    deliver_at TIMESTAMPTZ,
    attempts   INT
);

CREATE TABLE IF NOT EXISTS queen.timer_audit_outbox (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id   UUID NOT NULL DEFAULT gen_random_uuid(),
    tenant_id  UUID NOT NULL,
    kafka_key  TEXT,
    type       TEXT NOT NULL CHECK (type IN ('scheduled', 'rescheduled', 'cancelled', 'absent', 'too_late',
                                             'rejected', 'fired', 'retrying', 'dead_lettered')),
    event      JSONB NOT NULL,
    fired      queen.timer_fired_v1[],
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((type = 'fired') = (fired IS NOT NULL))
);
