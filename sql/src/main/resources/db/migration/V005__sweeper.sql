-- V005  The sweeper's own objects: the types its fire passes between steps, and the keys of its dead letters.

-- The fire (queen.timer_fire_v3, db/current/R__timer_fire.sql) is a driver over named steps
-- (docs/decisions.md#the-fires-order). State between the steps travels in these three composite types
-- (arrays of them in the driver), so each step's inputs are named, not positional. Types, not a
-- repeatable migration's objects: a function's signature names them, and a type in use cannot be
-- re-created. A change of shape is a new type (a new _vN) beside its new functions.
CREATE TYPE queen.timer_fire_segment_v2 AS (
    seg         INT,     -- 1-based position in the call
    tenant_id   UUID,
    queue       TEXT,
    "partition" TEXT,
    frames      INT,     -- its timers, one frame each
    blob_from   BIGINT,  -- its blob: bytes blob_from + 1 .. blob_from + blob_length of p_blobs
    blob_length INT,
    hash_from   BIGINT   -- its hashes: 16 * frames bytes of p_hashes after the first 16 * hash_from
);

CREATE TYPE queen.timer_fire_held_v2 AS (
    seg      INT,        -- the row's segment
    pos      INT,        -- its frame's position in the segment, 0-based: offset = base_offset + pos
    row_ctid TID         -- stable while this transaction holds the row lock
);

CREATE TYPE queen.timer_fire_pushed_v2 AS (
    seg          INT,
    partition_id UUID,
    base_offset  BIGINT,      -- NULL until the push step pushed it
    created_at   TIMESTAMPTZ
);

-- The tenant, queue and timer key of each dead letter the sweeper writes, by queen.log_dlq id. A DLQ row is
-- Queen's shape (no tenant, no timer key: the partition scopes it), and Queen owns that table, so this is a side
-- table rather than a column of it. Written in the same statement as the DLQ row (queen.timer_dead_letter_v3,
-- the fire's refusal step), deleted with it (queen.timer_dead_letter_remove_v1), read by `queen-timers
-- dead-letters` to replay and drop. No foreign key to queen.log_dlq either: log_dlq has none by design, and a
-- row deleted by hand leaves a harmless orphan that the readers never join to.
-- PRICE: one more row (~100 bytes) per dead letter, in the dead-letter's own transaction (a rare path: after
-- sweeper.max.attempts failures).
CREATE TABLE IF NOT EXISTS queen.timer_dlq_keys (
    dlq_id    UUID PRIMARY KEY,
    tenant_id UUID NOT NULL,
    queue     TEXT NOT NULL,
    timer_key TEXT NOT NULL
);
