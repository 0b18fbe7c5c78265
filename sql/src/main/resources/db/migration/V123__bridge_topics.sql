-- V123  Offsets are moved on purpose only (issue 24, point 5).
--
-- 1. queen.bridge_topics: which tenant each command topic of a bridge group stands for. That mapping is the
--    bridge's configuration (topic.<name>.tenant, command.topic.tenants), which the database did not know, so
--    `offsets set` wrote its offset_moved event to the default tenant's audit stream, whoever owned the topic.
--    Every bridge now registers its routes at start (queen.bridge_topics_register_v1); the offset functions
--    send their event to the registered tenant (an unregistered topic needs the operator to name one).
--    Keyed like queen.bridge_offsets (group, topic): an offset belongs to a group's reading of a topic, and the
--    tenant is what that group's configuration says. The last bridge to start wins a changed mapping.
-- 2. queen.bridge_offset_set_v1 is dropped: it moved a partition backwards without a word, and took the actor
--    from the client. Its successor bridge_offset_set_v2 (db/current/R__bridge_offset_set.sql) refuses a backward
--    move of a stored offset unless asked to replay, and records the actor from session_user and
--    inet_client_addr(). Only `queen-timers offsets set` called v1 (no running bridge or sweeper does), so no
--    rolling restart needs it; keeping it would leave a way around the check.
--
-- PRICE: one row per (group, command topic), written once per bridge start (one statement). An older
-- `queen-timers offsets set` fails against this schema (function does not exist) and must be upgraded.
-- Locks: CREATE TABLE takes none on existing tables; the DROP an exclusive lock on that function only.

CREATE TABLE IF NOT EXISTS queen.bridge_topics (
    group_id      TEXT NOT NULL,
    topic         TEXT NOT NULL,
    tenant_id     UUID NOT NULL,
    registered_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (group_id, topic)
);

DROP FUNCTION IF EXISTS queen.bridge_offset_set_v1(TEXT, TEXT, INT, BIGINT, TEXT, TEXT);
