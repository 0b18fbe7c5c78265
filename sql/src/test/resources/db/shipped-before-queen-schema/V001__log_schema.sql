-- V001  The Queen log: a compatible subset of Queen's log engine (DESIGN.md §2.1).
--
-- Why it is so:
--  * The log is a list of zstd segments per partition. A frame has no row of its own: the
--    partition's offsets are allocated under the queen.log_partitions row lock
--    (last_offset += n), so they are gapless and created_at, stamped under that lock, is
--    monotone per partition. The push lives in V002.
--  * queen.queues and queen.log_partitions are provisioned lazily, by the first push. Nothing
--    at schedule time writes them (seed: "the queue is born at the fire").
--  * queen.log_segments.blob is already zstd. STORAGE EXTERNAL keeps TOAST from compressing it a
--    second time (it would burn CPU and gain nothing); the price is that a segment is never
--    compressed inline, which is the point.
--  * queen.log_segments and queen.log_txns have no secondary index: their primary key
--    (partition_id, base_offset) is the read path, and every extra index would be paid on
--    every push.
--  * queen.log_txns holds 16 bytes per frame (XXH3-128 of the txn, big-endian, frame order)
--    so "was it sent?" scans hashes without decompressing segments. It is always written.
--
-- Storage numbers: none in this file. Settings that carry numbers live beside the table they
-- tune, each with the block that says where its number came from.

CREATE SCHEMA IF NOT EXISTS queen;

CREATE TABLE IF NOT EXISTS queen.queues (
    id                   UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id            UUID NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    name                 TEXT NOT NULL,
    namespace            TEXT,
    task                 TEXT,
    dedup_window_seconds INT NOT NULL DEFAULT 0,
    encryption_enabled   BOOLEAN NOT NULL DEFAULT FALSE,
    created_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS queen.log_partitions (
    id            UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    queue_id      UUID NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    name          TEXT NOT NULL DEFAULT 'Default',
    -- allocator: the next segment's base_offset is last_offset + 1
    last_offset   BIGINT NOT NULL DEFAULT -1,
    log_start     BIGINT NOT NULL DEFAULT 0,
    txns_start    BIGINT NOT NULL DEFAULT 0,
    last_write_at TIMESTAMPTZ,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (queue_id, name)
);

CREATE TABLE IF NOT EXISTS queen.log_segments (
    partition_id UUID NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    base_offset  BIGINT NOT NULL,
    end_offset   BIGINT NOT NULL,          -- inclusive
    created_at   TIMESTAMPTZ NOT NULL,
    blob         BYTEA NOT NULL,
    PRIMARY KEY (partition_id, base_offset),
    CHECK (end_offset >= base_offset)
);
ALTER TABLE queen.log_segments ALTER COLUMN blob SET STORAGE EXTERNAL;

CREATE TABLE IF NOT EXISTS queen.log_txns (
    partition_id UUID NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    base_offset  BIGINT NOT NULL,
    end_offset   BIGINT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    hashes       BYTEA NOT NULL,           -- 16 bytes per frame, frame order
    PRIMARY KEY (partition_id, base_offset),
    CHECK (octet_length(hashes) = 16 * (end_offset - base_offset + 1))
);

-- Cursor state of readers: everything <= committed is done.
CREATE TABLE IF NOT EXISTS queen.log_consumers (
    partition_id     UUID NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    consumer_group   TEXT NOT NULL,
    committed        BIGINT NOT NULL DEFAULT -1,
    worker_id        TEXT,
    lease_expires_at TIMESTAMPTZ,
    last_activity_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, consumer_group)
);

-- No tenant column: the partition, resolved under the row's tenant, scopes it.
-- The foreign key has no cascade on purpose: a DLQ row is somebody's unfinished business, and
-- deleting a partition must never delete it (log_partition_dead_v1 also refuses such a partition).
CREATE TABLE IF NOT EXISTS queen.log_dlq (
    id             UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    partition_id   UUID NOT NULL REFERENCES queen.log_partitions (id),
    consumer_group TEXT NOT NULL,
    "offset"       BIGINT NOT NULL,
    message_id     UUID,
    transaction_id TEXT,
    payload        JSONB,
    error          TEXT,
    retry_count    INT,
    failed_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- The foreign key above and the dead-partition check both look DLQ rows up by partition.
CREATE INDEX IF NOT EXISTS idx_log_dlq_partition ON queen.log_dlq (partition_id);
