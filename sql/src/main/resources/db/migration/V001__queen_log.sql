-- V001  The Queen log: Queen's own tables, created exactly as Queen creates them when they are absent,
--       never touched when they exist.
--
-- Queen owns these tables. The version this file follows is queen-mq/queen at commit 81010fab
-- (server/sql/schema.sql for queen.queues; server/sql/procedures/001_log_schema.sql in its version
-- with log_partitions.oldest_live_at / oldest_txn_at for the log tables; 005_log_ack.sql for
-- queen.log_dlq); docs/schema-and-roles.md#sharing-the-database-with-a-queen-broker pins the same version.
--
-- Why it is so:
--  * A Queen broker may share this database and may start before or after us, and it re-applies
--    its SQL on every boot (CREATE TABLE IF NOT EXISTS ... and CREATE OR REPLACE FUNCTION ...).
--    Its IF NOT EXISTS finds our table and moves on, so whatever we create is what Queen's pop, ack
--    and retention read: it has to be Queen's shape to the column, type, default, nullability,
--    index, constraint and storage setting. And when Queen was first, its table is the truth and we
--    must not change it. So each table is created inside a block that first asks the catalog
--    whether the table exists and, when it does, does nothing at all: no ALTER, no extra index, no
--    storage setting on a table we did not create.
--  * This file is the first and names no table of ours. queen.log_partition_dead_v1
--    (db/current/R__log_maintenance.sql) is LANGUAGE sql, so PostgreSQL resolves its tables when it is
--    created; MaintenanceCompileCheckIT creates it on a database migrated to this version only, where
--    queen.log_timers (V002) does not exist yet, so a leg naming the timer table fails there
--    (docs/decisions.md#the-dead-partition-check-is-a-compile-time-check).
--  * Objects only this project needs never carry a Queen name (ours are the functions of db/current
--    whose names Queen does not use, and the queen_timers schema).
--  * queen.queues carries all of Queen's queue settings though the timers read none of them: Queen's
--    pop reads delayed_processing and window_buffer from the row the sweeper provisioned.
--  * log_txns has NO foreign key (Queen's choice: its purge must never pay the trigger). Whoever
--    deletes a partition deletes its log_txns rows explicitly (queen.log_cleanup_partitions_v1 does).
--  * log_dlq has NO foreign key either: a DLQ row outlives its partition, and the dead-partition
--    check (queen.log_partition_dead_v1) refuses a partition that still holds one.
--  * log_segments.blob is already zstd: STORAGE EXTERNAL keeps TOAST from compressing it again.
--  * last_write_at is NOT NULL DEFAULT now(), and oldest_live_at / oldest_txn_at are the created_at
--    of the oldest live segment / log_txns row (NULL = none): Queen's retention finds work through
--    them, so every append maintains them (queen.log_append_v1).
--  * A Queen broker older than the version we follow made its log_partitions without those two
--    watermarks, and this file (which never alters a Queen table) leaves it so. Every append would then
--    fail at the fire; the last block refuses to migrate instead, and says what to do.
--
-- Storage numbers: the storage settings below are Queen's, taken with its tables; none is ours.
--
-- PRICE: one catalog probe per table at migrate. A Queen table made by an older or newer Queen is
-- used as it is: the last block checks the two watermarks the append writes, and nothing else of it.

CREATE SCHEMA IF NOT EXISTS queen;

DO $$
BEGIN
    IF to_regclass('queen.queues') IS NULL THEN
        CREATE TABLE queen.queues (
            id                          UUID PRIMARY KEY DEFAULT gen_random_uuid(),
            name                        VARCHAR(255) NOT NULL,
            tenant_id                   UUID NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
            namespace                   VARCHAR(255),
            task                        VARCHAR(255),
            priority                    INTEGER DEFAULT 0,
            lease_time                  INTEGER DEFAULT 60,
            retry_limit                 INTEGER DEFAULT 3,
            retry_delay                 INTEGER DEFAULT 1000,
            ttl                         INTEGER DEFAULT 3600,
            dead_letter_queue           BOOLEAN DEFAULT TRUE,
            dlq_after_max_retries       BOOLEAN DEFAULT TRUE,
            delayed_processing          INTEGER DEFAULT 0,
            window_buffer               INTEGER DEFAULT 0,
            retention_seconds           INTEGER DEFAULT 0,
            completed_retention_seconds INTEGER DEFAULT 0,
            retention_enabled           BOOLEAN DEFAULT FALSE,
            encryption_enabled          BOOLEAN DEFAULT FALSE,
            max_wait_time_seconds       INTEGER DEFAULT 0,
            max_queue_size              INTEGER DEFAULT 0,
            min_pop_wait_time           INTEGER DEFAULT 0,
            dedup_window_seconds        INTEGER NOT NULL DEFAULT 3600,
            created_at                  TIMESTAMPTZ DEFAULT now()
        );
        -- Queue identity is (tenant_id, name): a unique INDEX (Queen's name), not a constraint.
        CREATE UNIQUE INDEX queues_tenant_name_uk ON queen.queues (tenant_id, name);
        CREATE INDEX idx_queues_name ON queen.queues (name);
    END IF;

    IF to_regclass('queen.log_partitions') IS NULL THEN
        CREATE TABLE queen.log_partitions (
            id            UUID PRIMARY KEY DEFAULT gen_random_uuid(),
            queue_id      UUID NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
            name          TEXT NOT NULL DEFAULT 'Default',
            -- allocator: the next segment's base_offset is last_offset + 1
            last_offset   BIGINT NOT NULL DEFAULT -1,
            log_start     BIGINT NOT NULL DEFAULT 0,
            txns_start    BIGINT NOT NULL DEFAULT 0,
            last_write_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
            UNIQUE (queue_id, name)
        );
        -- Queen adds these two after its CREATE TABLE; adding them the same way keeps the column
        -- order of a Queen-made table.
        ALTER TABLE queen.log_partitions ADD COLUMN oldest_live_at TIMESTAMPTZ;
        ALTER TABLE queen.log_partitions ADD COLUMN oldest_txn_at TIMESTAMPTZ;
        ALTER TABLE queen.log_partitions SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0,
            autovacuum_vacuum_threshold = 500, autovacuum_vacuum_cost_delay = 0, vacuum_truncate = off);
        CREATE INDEX idx_log_partitions_queue_write ON queen.log_partitions (queue_id, last_write_at);
        CREATE INDEX idx_log_partitions_queue_oldest ON queen.log_partitions (queue_id, oldest_live_at)
            WHERE oldest_live_at IS NOT NULL;
        CREATE INDEX idx_log_partitions_queue_oldest_txn ON queen.log_partitions (queue_id, oldest_txn_at)
            WHERE oldest_txn_at IS NOT NULL;
    END IF;

    IF to_regclass('queen.log_segments') IS NULL THEN
        CREATE TABLE queen.log_segments (
            partition_id UUID NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
            base_offset  BIGINT NOT NULL,
            end_offset   BIGINT NOT NULL,          -- inclusive
            created_at   TIMESTAMPTZ NOT NULL,
            blob         BYTEA NOT NULL,
            PRIMARY KEY (partition_id, base_offset)
        );
        ALTER TABLE queen.log_segments ALTER COLUMN blob SET STORAGE EXTERNAL;
        ALTER TABLE queen.log_segments SET (autovacuum_vacuum_scale_factor = 0.1,
            autovacuum_vacuum_insert_scale_factor = 0.3, autovacuum_vacuum_cost_limit = 4000,
            autovacuum_vacuum_cost_delay = 0, toast.autovacuum_vacuum_scale_factor = 0.1,
            toast.autovacuum_vacuum_insert_scale_factor = 0.3, toast.autovacuum_vacuum_cost_limit = 4000,
            toast.autovacuum_vacuum_cost_delay = 0);
    END IF;

    -- 16 bytes per frame (XXH3-128 of the txn, big-endian, frame order), so "was it sent?" scans
    -- hashes without decompressing segments. No foreign key (see the header).
    IF to_regclass('queen.log_txns') IS NULL THEN
        CREATE TABLE queen.log_txns (
            partition_id UUID NOT NULL,
            base_offset  BIGINT NOT NULL,
            end_offset   BIGINT NOT NULL,
            created_at   TIMESTAMPTZ NOT NULL,
            hashes       BYTEA NOT NULL,
            PRIMARY KEY (partition_id, base_offset)
        );
        ALTER TABLE queen.log_txns SET (autovacuum_vacuum_scale_factor = 0.1,
            autovacuum_vacuum_insert_scale_factor = 0.3, autovacuum_vacuum_cost_delay = 0);
    END IF;

    -- Cursor and lease of a consumer group on a partition: everything <= committed is done, a leased
    -- batch is (committed, batch_end]. Written only by Queen's pop and ack; queen.log_partition_dead_v1 reads it.
    IF to_regclass('queen.log_consumers') IS NULL THEN
        CREATE TABLE queen.log_consumers (
            partition_id      UUID NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
            consumer_group    TEXT NOT NULL DEFAULT '__QUEUE_MODE__',
            committed         BIGINT NOT NULL DEFAULT -1,
            batch_end         BIGINT,
            worker_id         TEXT,
            lease_expires_at  TIMESTAMPTZ,
            lease_acquired_at TIMESTAMPTZ,
            batch_retry_count INTEGER NOT NULL DEFAULT 0,
            attempt_offset    BIGINT,
            attempt_count     INTEGER NOT NULL DEFAULT 0,
            total_consumed    BIGINT NOT NULL DEFAULT 0,
            lease_conflated   BOOLEAN NOT NULL DEFAULT FALSE,
            created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (partition_id, consumer_group)
        );
        ALTER TABLE queen.log_consumers SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
            autovacuum_vacuum_threshold = 500, autovacuum_vacuum_cost_delay = 0, vacuum_truncate = off);
    END IF;

    -- No tenant column: the partition, resolved under the row's tenant, scopes it. No foreign key
    -- (see the header).
    IF to_regclass('queen.log_dlq') IS NULL THEN
        CREATE TABLE queen.log_dlq (
            id             UUID PRIMARY KEY DEFAULT gen_random_uuid(),
            partition_id   UUID NOT NULL,
            consumer_group TEXT NOT NULL,
            "offset"       BIGINT NOT NULL,
            message_id     UUID,
            transaction_id TEXT,
            payload        JSONB,
            error          TEXT,
            retry_count    INTEGER DEFAULT 0,
            failed_at      TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE INDEX idx_log_dlq_partition_failed_at ON queen.log_dlq (partition_id, failed_at DESC);
    END IF;
END
$$;

DO $$
BEGIN
    IF (SELECT count(*) FROM information_schema.columns
         WHERE table_schema = 'queen' AND table_name = 'log_partitions'
           AND column_name IN ('oldest_live_at', 'oldest_txn_at')) <> 2 THEN
        RAISE EXCEPTION 'queen.log_partitions has no oldest_live_at / oldest_txn_at: the Queen schema in this database is older than the version queen-timers follows (queen-mq/queen 81010fab, docs/schema-and-roles.md); upgrade the Queen broker sharing this database, let it boot once, then start queen-timers again'
            USING ERRCODE = '55000';
    END IF;
END
$$;
