-- V003  The audit outbox, and the relay's bookkeeping (docs/decisions.md#the-audit-outbox).
--
-- Every outcome (a command's verdict, a fire, a retry, a dead-letter, an operator's move) is written to
-- queen.timer_audit_outbox in the SAME transaction as the change it reports, so "committed" and "will be
-- published" are one fact. A relay (one active per database, under the relay lease below) publishes rows
-- in id order with an idempotent producer and deletes them only after the broker acknowledged them.
--
-- Price: at-least-once. A relay that dies between the broker's ack and its DELETE publishes those rows
-- again on restart. event_id is minted here, once, so a consumer deduplicates on it.
--
-- Per-key order: two events for one timer come from transactions that are serialized by that timer's
-- row lock (or, for verdicts without a row, by the bridge's single consumer of the key's Kafka
-- partition), so the later one is inserted after the earlier one committed and gets a larger id.
--
-- kafka_key is NULL only for a rejected record whose key could not be read. tenant_id picks the audit
-- topic: tenants never share an audit key space (docs/architecture.md#tenants).
--
-- The published value is {"eventId", "type", "at", "tenant"} || event, so writers put only the fields
-- specific to the event into `event`.
--
-- `fired` events are the exception: ONE row per fired segment, not per timer
-- (docs/decisions.md#a-fired-segment-is-one-outbox-row). The row's `event` holds what its timers share
-- ({"queue", "partition", "offset" of the segment's first frame, "segmentCreatedAt"}) and `fired` holds
-- one element per timer in frame order, each with its own event_id minted here. The relay expands the row
-- into one Kafka event per timer (key "<queue>/<timerKey>", offset = offset + position, lateMs =
-- segmentCreatedAt - deliverAt). Why: a row per timer cost the fire an identity value, a random event_id,
-- a jsonb build, a heap tuple and a primary-key entry per timer, inside the transaction that holds the
-- destination partitions, and the relay a fetch and a delete per timer again; a segment row costs one of
-- each per segment plus an array element per timer. PRICE: two shapes of row in one table; whoever reads
-- the outbox directly must expand `fired`, which the view queen.timer_audit_events
-- (db/current/R__timer_audit_events.sql) does, and the relay's backlog gauge counts rows, not events.
--
-- Three arrays beside `fired`, each aligned with it element for element and NULL when no timer of the
-- segment has a value, so a deployment without producer subs, tracing or recurring timers writes nothing
-- more: fired_subs (the timers' proven producer subs, docs/security.md#producer-identity), fired_traces
-- (their trace contexts, as queen.log_timers.trace_context) and fired_recur (a recurring timer's
-- occurrence fields, {"occurrence","seq","next","skipped"}). Parallel columns rather than new attributes
-- of queen.timer_fired_v1: a composite type used by a table column cannot take a new attribute without
-- rewriting the column and every reader of the type, while ADD COLUMN of a nullable column is a catalog
-- change. PRICE: arrays that must stay aligned; the CHECKs pin their lengths, and the only writer is the
-- fire (one array_agg ORDER BY each).

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
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id     UUID NOT NULL DEFAULT gen_random_uuid(),
    tenant_id    UUID NOT NULL,
    kafka_key    TEXT,
    type         TEXT NOT NULL,
    event        JSONB NOT NULL,
    fired        queen.timer_fired_v1[],
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    fired_subs   TEXT[],
    fired_traces BYTEA[],
    fired_recur  JSONB[],
    CONSTRAINT timer_audit_outbox_type_check
        CHECK (type IN ('scheduled', 'rescheduled', 'cancelled', 'absent', 'too_late', 'rejected', 'fired', 'retrying',
                        'dead_lettered', 'offset_moved', 'dead_letter_removed', 'skipped')),
    CONSTRAINT timer_audit_outbox_check CHECK ((type = 'fired') = (fired IS NOT NULL)),
    CONSTRAINT timer_audit_outbox_fired_subs_aligned
        CHECK (fired_subs IS NULL OR cardinality(fired_subs) = cardinality(fired)),
    CONSTRAINT timer_audit_outbox_fired_traces_aligned
        CHECK (fired_traces IS NULL OR cardinality(fired_traces) = cardinality(fired))
);

-- The relay's lease: one row, written only by queen.timer_audit_lease_v1 / _release_v1
-- (db/current/R__timer_audit_relay.sql), which only queen_bridge and queen_sweeper may execute; the read and
-- the delete ask for the lease's token. Not an advisory lock: every login may take one, and holding it as any
-- login (the operator's, say) would stop every tenant's audit events until it let go. The lease runs for the
-- owner's queen.timer_settings.relay_lease (V006): a caller does not choose how long it may hold publication.
-- Its holder renews it while it publishes and stops sending before it runs out, so a relay that lost it has
-- nothing in flight when another takes it (per-key order kept across the hand-over).
-- PRICE: a relay that dies without letting go (a crash, a lost network) is replaced only once its lease ran
-- out: up to relay_lease (20 s by default) of audit delay. A relay stopped cleanly lets go at once. One row
-- update per renewal (about every third of the lease), none per round.
CREATE TABLE IF NOT EXISTS queen.timer_audit_relay_lease (
    one        BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    token      UUID NOT NULL,           -- the holder's secret: renewals, reads and deletes present it
    holder     TEXT NOT NULL,           -- login@address of the session that took it (for a person reading the row)
    taken_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ NOT NULL
);
INSERT INTO queen.timer_audit_relay_lease (one, token, holder, expires_at)
VALUES (TRUE, gen_random_uuid(), 'nobody', '-infinity') ON CONFLICT DO NOTHING;

-- What the relay's last read handed out: one row, the read's token and ids, written by the lease holder only
-- (queen.timer_audit_read_v3) and readable by no service role (a token no other login can learn). The delete
-- (queen.timer_audit_delete_v3) removes only ids of the last read whose token it presents, so a login of the
-- relay's roles cannot erase another tenant's unpublished events by id.
-- PRICE: one row written per round that read something (a heap tuple with the ids: 8 bytes each, compressed
-- when long).
CREATE TABLE IF NOT EXISTS queen.timer_audit_reads (
    one     BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    token   UUID NOT NULL,
    ids     BIGINT[] NOT NULL,
    read_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
