-- V006  Partition maintenance (DESIGN.md §2.2).
--
-- queen.log_partition_dead_v1(partition_id, cutoff) answers "may this partition be deleted?":
-- it was created and last written before the cutoff, it holds no segment and no DLQ row, and no
-- consumer holds a live lease on it or was active since the cutoff.
--
-- Why LANGUAGE sql: PostgreSQL resolves the tables of a SQL-language function when the function
-- is created. That is the seed's free compile-time check: this file runs before V025 creates
-- queen.log_timers, so a leg that names queen.log_timers here (or in any later LANGUAGE sql
-- rewrite placed before V025) kills the migration instead of silently making this
-- per-partition scan pay for every pending timer. queen.log_timers has no partition column, so
-- a pending timer does not keep its destination alive: the fire provisions it again.
--
-- Price: one index probe per leg per partition. Segments and txns are probed by their primary
-- key prefix, DLQ rows by idx_log_dlq_partition, consumers by their primary key prefix.

CREATE OR REPLACE FUNCTION queen.log_partition_dead_v1(p_partition_id UUID, p_cutoff TIMESTAMPTZ)
RETURNS BOOLEAN
LANGUAGE sql
STABLE
AS $$
    SELECT EXISTS (
               SELECT 1 FROM queen.log_partitions p
                WHERE p.id = p_partition_id
                  AND p.created_at < p_cutoff
                  AND coalesce(p.last_write_at, p.created_at) < p_cutoff)
       AND NOT EXISTS (SELECT 1 FROM queen.log_segments s WHERE s.partition_id = p_partition_id)
       AND NOT EXISTS (SELECT 1 FROM queen.log_dlq d WHERE d.partition_id = p_partition_id)
       AND NOT EXISTS (SELECT 1 FROM queen.log_consumers c
                        WHERE c.partition_id = p_partition_id
                          AND (c.lease_expires_at > now() OR c.last_activity_at >= p_cutoff))
$$;
