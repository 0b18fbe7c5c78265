-- V060  Databases migrated before issue 17: their log tables, created by V001's earlier text in a
--       shape of our own, take Queen's shape (queen-mq/queen 81010fab, as V001 now creates it).
--
-- Why a migration, and why only here: V001 and V006 changed text (the README's "Schema" section says
-- why). A database where their earlier text ran still holds the tables that text made, and Flyway
-- never runs V001 again there. Every step below first recognises a table as ours by a mark only the
-- earlier V001 left (a column, a constraint or a nullability Queen's table never has), so a table
-- Queen made, and a table V001 made in Queen's shape, is never touched. On a database migrated from
-- scratch after issue 17 this whole file does nothing.
--
-- What a converted database keeps that a fresh one does not: column ORDER (added columns come last;
-- nothing reads these tables by position), and its rows' values (dedup_window_seconds stays 0 on
-- queues the sweeper provisioned before: Queen's push reads 0 as "no dedup probe", which is what
-- those queues always had).
--
-- Lock price: ALTER TABLE takes ACCESS EXCLUSIVE on each converted table for the migration; the
-- queues column type change rewrites queen.queues (one row per queue). It runs once.

DO $$
BEGIN
    -- The earlier V006 made queen.log_partition_dead_v1 with a parameter named p_partition_id and a
    -- leg on log_consumers.last_activity_at, which goes below. Drop ours (never Queen's: Queen's first
    -- parameter is p_pid); db/current/R__log_maintenance.sql creates the current one after the versioned migrations.
    IF (SELECT p.proargnames[1] FROM pg_proc p
         WHERE p.oid = to_regprocedure('queen.log_partition_dead_v1(uuid, timestamptz)')) = 'p_partition_id' THEN
        DROP FUNCTION queen.log_partition_dead_v1(UUID, TIMESTAMPTZ);
    END IF;

    -- queen.queues without Queen's queue settings.
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                    WHERE table_schema = 'queen' AND table_name = 'queues' AND column_name = 'delayed_processing') THEN
        ALTER TABLE queen.queues
            ALTER COLUMN name TYPE VARCHAR(255),
            ALTER COLUMN namespace TYPE VARCHAR(255),
            ALTER COLUMN task TYPE VARCHAR(255),
            ALTER COLUMN dedup_window_seconds SET DEFAULT 3600,
            ALTER COLUMN encryption_enabled DROP NOT NULL,
            ALTER COLUMN created_at DROP NOT NULL,
            ADD COLUMN priority INTEGER DEFAULT 0,
            ADD COLUMN lease_time INTEGER DEFAULT 60,
            ADD COLUMN retry_limit INTEGER DEFAULT 3,
            ADD COLUMN retry_delay INTEGER DEFAULT 1000,
            ADD COLUMN ttl INTEGER DEFAULT 3600,
            ADD COLUMN dead_letter_queue BOOLEAN DEFAULT TRUE,
            ADD COLUMN dlq_after_max_retries BOOLEAN DEFAULT TRUE,
            ADD COLUMN delayed_processing INTEGER DEFAULT 0,
            ADD COLUMN window_buffer INTEGER DEFAULT 0,
            ADD COLUMN retention_seconds INTEGER DEFAULT 0,
            ADD COLUMN completed_retention_seconds INTEGER DEFAULT 0,
            ADD COLUMN retention_enabled BOOLEAN DEFAULT FALSE,
            ADD COLUMN max_wait_time_seconds INTEGER DEFAULT 0,
            ADD COLUMN max_queue_size INTEGER DEFAULT 0,
            ADD COLUMN min_pop_wait_time INTEGER DEFAULT 0;
        -- Identity by Queen's unique index instead of our unique constraint (Queen's boot would
        -- otherwise add its index beside ours).
        CREATE UNIQUE INDEX queues_tenant_name_uk ON queen.queues (tenant_id, name);
        ALTER TABLE queen.queues DROP CONSTRAINT queues_tenant_id_name_key;
        CREATE INDEX idx_queues_name ON queen.queues (name);
    END IF;

    -- queen.log_partitions with a nullable last_write_at and no retention watermarks.
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                    WHERE table_schema = 'queen' AND table_name = 'log_partitions' AND column_name = 'oldest_live_at')
       AND (SELECT is_nullable FROM information_schema.columns
             WHERE table_schema = 'queen' AND table_name = 'log_partitions' AND column_name = 'last_write_at') = 'YES' THEN
        -- Never written: Queen's default would have stamped the creation.
        UPDATE queen.log_partitions SET last_write_at = created_at WHERE last_write_at IS NULL;
        ALTER TABLE queen.log_partitions
            ALTER COLUMN last_write_at SET DEFAULT now(),
            ALTER COLUMN last_write_at SET NOT NULL;
        ALTER TABLE queen.log_partitions ADD COLUMN oldest_live_at TIMESTAMPTZ;
        ALTER TABLE queen.log_partitions ADD COLUMN oldest_txn_at TIMESTAMPTZ;
        -- The created_at of the row at each watermark, NULL when nothing is live (what every append
        -- maintains from V061 on).
        UPDATE queen.log_partitions p
           SET oldest_live_at = (SELECT s.created_at FROM queen.log_segments s
                                  WHERE s.partition_id = p.id AND s.base_offset >= p.log_start
                                  ORDER BY s.base_offset LIMIT 1),
               oldest_txn_at = (SELECT t.created_at FROM queen.log_txns t
                                 WHERE t.partition_id = p.id AND t.base_offset >= p.txns_start
                                 ORDER BY t.base_offset LIMIT 1);
        ALTER TABLE queen.log_partitions SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0,
            autovacuum_vacuum_threshold = 500, autovacuum_vacuum_cost_delay = 0, vacuum_truncate = off);
        CREATE INDEX idx_log_partitions_queue_write ON queen.log_partitions (queue_id, last_write_at);
        CREATE INDEX idx_log_partitions_queue_oldest ON queen.log_partitions (queue_id, oldest_live_at)
            WHERE oldest_live_at IS NOT NULL;
        CREATE INDEX idx_log_partitions_queue_oldest_txn ON queen.log_partitions (queue_id, oldest_txn_at)
            WHERE oldest_txn_at IS NOT NULL;
    END IF;

    -- queen.log_segments with our range check.
    IF EXISTS (SELECT 1 FROM pg_constraint
                WHERE conrelid = 'queen.log_segments'::regclass AND conname = 'log_segments_check') THEN
        ALTER TABLE queen.log_segments DROP CONSTRAINT log_segments_check;
        ALTER TABLE queen.log_segments SET (autovacuum_vacuum_scale_factor = 0.1,
            autovacuum_vacuum_insert_scale_factor = 0.3, autovacuum_vacuum_cost_limit = 4000,
            autovacuum_vacuum_cost_delay = 0, toast.autovacuum_vacuum_scale_factor = 0.1,
            toast.autovacuum_vacuum_insert_scale_factor = 0.3, toast.autovacuum_vacuum_cost_limit = 4000,
            toast.autovacuum_vacuum_cost_delay = 0);
    END IF;

    -- queen.log_txns with our foreign key and length check.
    IF EXISTS (SELECT 1 FROM pg_constraint
                WHERE conrelid = 'queen.log_txns'::regclass AND conname = 'log_txns_partition_id_fkey') THEN
        ALTER TABLE queen.log_txns DROP CONSTRAINT log_txns_partition_id_fkey;
        ALTER TABLE queen.log_txns DROP CONSTRAINT IF EXISTS log_txns_check;
        ALTER TABLE queen.log_txns SET (autovacuum_vacuum_scale_factor = 0.1,
            autovacuum_vacuum_insert_scale_factor = 0.3, autovacuum_vacuum_cost_delay = 0);
    END IF;

    -- queen.log_consumers with our last_activity_at and without Queen's lease columns.
    IF EXISTS (SELECT 1 FROM information_schema.columns
                WHERE table_schema = 'queen' AND table_name = 'log_consumers' AND column_name = 'last_activity_at') THEN
        ALTER TABLE queen.log_consumers
            ALTER COLUMN consumer_group SET DEFAULT '__QUEUE_MODE__',
            ADD COLUMN batch_end BIGINT,
            ADD COLUMN lease_acquired_at TIMESTAMPTZ,
            ADD COLUMN batch_retry_count INTEGER NOT NULL DEFAULT 0,
            ADD COLUMN attempt_offset BIGINT,
            ADD COLUMN attempt_count INTEGER NOT NULL DEFAULT 0,
            ADD COLUMN total_consumed BIGINT NOT NULL DEFAULT 0,
            ADD COLUMN lease_conflated BOOLEAN NOT NULL DEFAULT FALSE;
        -- The activity it recorded is still activity to the dead-partition check.
        UPDATE queen.log_consumers SET lease_acquired_at = last_activity_at;
        ALTER TABLE queen.log_consumers DROP COLUMN last_activity_at;
        ALTER TABLE queen.log_consumers SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
            autovacuum_vacuum_threshold = 500, autovacuum_vacuum_cost_delay = 0, vacuum_truncate = off);
    END IF;

    -- queen.log_dlq with our foreign key and our index.
    IF EXISTS (SELECT 1 FROM pg_constraint
                WHERE conrelid = 'queen.log_dlq'::regclass AND conname = 'log_dlq_partition_id_fkey') THEN
        ALTER TABLE queen.log_dlq DROP CONSTRAINT log_dlq_partition_id_fkey;
        ALTER TABLE queen.log_dlq ALTER COLUMN retry_count SET DEFAULT 0;
        DROP INDEX IF EXISTS queen.idx_log_dlq_partition;
        CREATE INDEX idx_log_dlq_partition_failed_at ON queen.log_dlq (partition_id, failed_at DESC);
    END IF;

    -- The earlier V001 added this index to queen.log_dlq even when Queen had made the table (a database
    -- where Queen was first got as far as V003 before the earlier V006 failed). The name is ours alone
    -- (Queen's is idx_log_dlq_partition_failed_at).
    DROP INDEX IF EXISTS queen.idx_log_dlq_partition;
END
$$;
