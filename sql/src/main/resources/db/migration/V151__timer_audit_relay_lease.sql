-- V151  The audit relay publishes under a lease only the relay's roles can take, not an advisory lock.
--
-- One relay per database publishes the outbox (core's AuditRelay). Its exclusivity was PostgreSQL's advisory lock
-- (pg_try_advisory_lock), which every login may take: holding it as any login (the operator's, say) stopped every
-- tenant's audit events until it let go, and the functions that read and delete for publishing asked only "does this
-- session hold the lock". Now it is one row, queen.timer_audit_relay_lease, written only by
-- queen.timer_audit_lease_v1 / _release_v1 (db/current/R__timer_audit_relay.sql), which only queen_bridge and
-- queen_sweeper may execute; the read and the delete ask for the lease's token.
--
-- The lease runs for queen.timer_settings.relay_lease (the owner's, like the other bounds: a caller does not choose how
-- long it may hold publication). Its holder renews it while it publishes and stops sending before it runs out, so a
-- relay that lost it has nothing in flight when another takes it (per-key order kept across the hand-over).
-- PRICE: a relay that dies without letting go (a crash, a lost network) is replaced only once its lease ran out: up to
-- relay_lease (20 s by default) more of audit delay, where the advisory lock went with the session at once. A relay
-- stopped cleanly lets go at once. One row update per renewal (about every third of the lease), none per round.
--
-- The previous release's relays read through timer_audit_read_v2 under the advisory lock; it and its delete are
-- dropped here (so an old relay cannot publish beside a new one: during a rolling restart its rounds fail and its
-- rows wait for a relay of this release, which publishes them: the same eventId, at least once).

CREATE TABLE IF NOT EXISTS queen.timer_audit_relay_lease (
    one        BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    token      UUID NOT NULL,           -- the holder's secret: renewals, reads and deletes present it
    holder     TEXT NOT NULL,           -- login@address of the session that took it (for a person reading the row)
    taken_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ NOT NULL
);
INSERT INTO queen.timer_audit_relay_lease (one, token, holder, expires_at)
VALUES (TRUE, gen_random_uuid(), 'nobody', '-infinity') ON CONFLICT DO NOTHING;

ALTER TABLE queen.timer_settings
    ADD COLUMN IF NOT EXISTS relay_lease INTERVAL NOT NULL DEFAULT INTERVAL '20 seconds'
        CHECK (relay_lease >= INTERVAL '1 second' AND relay_lease <= INTERVAL '1 hour');

DROP FUNCTION IF EXISTS queen.timer_audit_read_v2(UUID[], INT, INT);
DROP FUNCTION IF EXISTS queen.timer_audit_delete_v2(UUID, BIGINT[]);
DROP FUNCTION IF EXISTS queen.timer_audit_relay_held_v1();
