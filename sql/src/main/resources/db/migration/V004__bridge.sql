-- V004  The bridge's state: where each group stands in each Kafka partition, and what the owner bound
--       each group to (docs/decisions.md#exactly-once-ingest, docs/schema-and-roles.md#database-roles).
--
-- Lock order: every table here is a leaf. The bridge writes queen.bridge_offsets last in its transaction,
-- after queen.log_timers and the outbox; the others are written at start or by the owner, one statement each.

-- Where each bridge consumer group stands in each Kafka partition. A poll batch is applied in ONE
-- transaction that writes the timer rows, one audit outbox row per record, and the next offset of every
-- Kafka partition in the batch here. Kafka's own committed offsets are never read (enable.auto.commit=false):
-- on assignment the bridge seeks to next_offset, so a crash anywhere either kept the whole batch or none of it.
-- Zombie fence: a batch advances next_offset only by check-and-set (UPDATE ... WHERE next_offset = the offset
-- the bridge sought to; INSERT ... ON CONFLICT DO NOTHING for a partition never seen). A consumer that lost its
-- partition to another instance, or a commit whose acknowledgement was lost, finds a different value, rolls its
-- whole batch back and seeks again. An operator moves an offset only through queen.bridge_offset_set_v2, with
-- an audit event (docs/guarantees.md#offsets-are-moved-on-purpose-only).
-- No tenant column: offsets belong to a consumer group, not to a tenant (queen.bridge_topics says which tenant
-- a topic stands for). PRICE: none on the happy path (the row is the bridge's own), one wasted batch after a
-- rebalance race.
CREATE TABLE IF NOT EXISTS queen.bridge_offsets (
    group_id     TEXT NOT NULL,
    topic        TEXT NOT NULL,
    "partition"  INT NOT NULL,
    next_offset  BIGINT NOT NULL CHECK (next_offset >= 0),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (group_id, topic, "partition")
);

-- Which tenant each command topic of a bridge group stands for, so that an offset's audit event, a replayed
-- dead letter and every bridge function's check of the tenants it is given follow the database, not a
-- caller. Keyed like queen.bridge_offsets (group, topic): an offset belongs to a group's reading of a topic.
--   bound_by  'owner': set by queen.bridge_group_bind_v1 (`queen-timers migrate` with the bridge's declaration:
--             exactly the declared topics and tenants). 'bridge': registered by a bridge's own call from a
--             login that may write this table itself (the owner, a superuser: the tests, a single-role
--             development database); a service login's call only checks its topics against the owner's
--             binding and writes nothing (db/current/R__bridge_topics.sql).
-- PRICE: one row per (group, command topic); a new topic or a new tenant for a topic needs the owner's step
-- before its bridges start.
CREATE TABLE IF NOT EXISTS queen.bridge_topics (
    group_id      TEXT NOT NULL,
    topic         TEXT NOT NULL,
    tenant_id     UUID NOT NULL,
    registered_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    bound_by      TEXT NOT NULL DEFAULT 'bridge' CHECK (bound_by IN ('owner', 'bridge')),
    PRIMARY KEY (group_id, topic)
);

-- A bridge group's encryption.queues, where the fire can read them. A queue is encrypted when
-- queen.queues.encryption_enabled says so OR when it matches a bridge's encryption.queues patterns (a queue is
-- born at the fire, so before it exists only a pattern can say it must be sealed). Each bridge group writes its
-- patterns here at start (queen.bridge_sealed_queues_set_v1), as SQL LIKE patterns, before it consumes a
-- record; the fire refuses a clear row whose queue matches a pattern of a group whose command topics stand for that
-- row's tenant.
-- PRICE: one more read per fire of a table with one row per bridge group (a sequential scan of a page); a queue
-- whose pattern is removed keeps being refused until the bridge of that group restarts with its new
-- configuration (a group retired for good keeps its row: DELETE it as the owner,
-- docs/security.md#payload-encryption). A pattern added while a fire runs is seen by fires that start after
-- the bridge wrote it.
CREATE TABLE IF NOT EXISTS queen.bridge_sealed_queues (
    group_id   TEXT        PRIMARY KEY,
    patterns   TEXT[]      NOT NULL,     -- SQL LIKE patterns ('%' for the setting's '*'), never empty
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The login each bridge group runs as. A group's topics, sealed patterns, offsets and batches are changed only
-- by that login (queen.bridge_group_login_v1, called first by every bridge function that takes a group), so a
-- login of queen_bridge cannot re-bind another group's topic to another tenant, erase its sealing patterns or
-- rewrite its offsets. The operator's `offsets set` (queen.bridge_offset_set_v2, with its audit event) is not
-- bound: moving a group's offsets on purpose is the operator's.
--   bound_by  'owner': bound by queen.bridge_group_bind_v1 (`queen-timers migrate` with bridge.login and the
--             bridge's declaration). 'first call': bound to the login of its first call, which only a login that
--             may write this table itself makes (the owner, a superuser); a group nobody bound is refused (42501,
--             naming the fix) to every other login.
-- To move a group to another login, as the owner: queen-timers migrate with the new bridge.login, or
--   DELETE FROM queen.bridge_groups WHERE group_id = '...';
-- PRICE: one primary-key probe per batch and per start call; a group cannot be shared by two bridge logins (run
-- one login per group); a new group needs the owner's step before its bridges start.
CREATE TABLE IF NOT EXISTS queen.bridge_groups (
    group_id TEXT PRIMARY KEY,
    login    TEXT NOT NULL,
    bound_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    bound_by TEXT NOT NULL DEFAULT 'first call' CHECK (bound_by IN ('owner', 'first call'))
);
