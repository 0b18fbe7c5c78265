-- One segment into (tenant, queue, partition): provision, lock, append (V002, log_push_v1).
-- Lock order: queen.queues -> queen.log_partitions (one row) -> leaves.
SELECT partition_id, base_offset, created_at FROM queen.log_push_v1(?, ?, ?, ?, ?, ?)
