-- Partition maintenance: queen.log_partition_dead_v1(p_pid, p_cutoff), Queen's function, created only
-- when absent.
--
-- "May this partition be deleted?": it was created and last written before the cutoff, it holds no
-- segment and no DLQ row, and no consumer holds a live lease on it or touched it since the cutoff.
-- A lease is live while batch_end is set and lease_expires_at is in the future (or missing, a broken
-- lease that counts as live); any lease expiry, lease start or consumer row newer than the cutoff is
-- activity.
--
-- Queen owns this function (queen-mq/queen 81010fab, server/sql/procedures/006_log_maintenance.sql):
-- same name, argument types, parameter NAMES (p_pid, p_cutoff) and result type. PostgreSQL refuses a
-- CREATE OR REPLACE that renames a parameter (42P13), so a function of ours under this name with other
-- parameter names would stop Queen's boot, and Queen's would stop this migration. So:
--  * when Queen was first, the catalog has its function and this file does nothing (no REPLACE);
--  * when we are first, we create it with Queen's signature, and Queen's boot later replaces our body
--    with its own, which we accept: it is Queen's.
-- Our body has every leg of Queen's but one: Queen also vetoes a partition that holds state in its
-- streams schema (queen_streams.state), which exists only where Queen created it.
--
-- Why LANGUAGE sql: PostgreSQL resolves the tables of a SQL-language function when it is created, so
-- MaintenanceCompileCheckIT runs this file on a database migrated only to V001 (Queen's log tables), before V002
-- creates queen.log_timers: a leg that named queen.log_timers would fail that test instead of silently making
-- this per-partition scan pay for every pending timer
-- (docs/decisions.md#the-dead-partition-check-is-a-compile-time-check). queen.log_timers has no
-- partition column, so a pending timer does not keep its destination alive: the fire provisions it again.
--
-- Locks: none (STABLE, plain reads). PRICE: one index probe per leg per partition (segments and
-- consumers by their primary key prefix, DLQ rows by idx_log_dlq_partition_failed_at).

DO $$
BEGIN
    IF to_regprocedure('queen.log_partition_dead_v1(uuid, timestamptz)') IS NULL THEN
        CREATE FUNCTION queen.log_partition_dead_v1(p_pid UUID, p_cutoff TIMESTAMPTZ)
        RETURNS BOOLEAN
        LANGUAGE sql
        STABLE
        AS $fn$
            SELECT p.created_at < p_cutoff
               AND p.last_write_at < p_cutoff
               AND NOT EXISTS (SELECT 1 FROM queen.log_segments s WHERE s.partition_id = p.id)
               AND NOT EXISTS (SELECT 1 FROM queen.log_dlq d WHERE d.partition_id = p.id)
               AND NOT EXISTS (SELECT 1 FROM queen.log_consumers c
                                WHERE c.partition_id = p.id
                                  AND ((c.batch_end IS NOT NULL AND coalesce(c.lease_expires_at > now(), TRUE))
                                       OR c.lease_expires_at >= p_cutoff
                                       OR c.lease_acquired_at >= p_cutoff
                                       OR c.created_at >= p_cutoff))
              FROM queen.log_partitions p
             WHERE p.id = p_pid
        $fn$;
    END IF;
END
$$;
