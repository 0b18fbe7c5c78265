-- Parallel arrays (tenants, queues, partitions) -> partition id of each distinct triple (V002).
-- Lock order: queen.queues then queen.log_partitions, inserts ordered by unique key.
SELECT tenant_id, queue, "partition", partition_id FROM queen.log_provision_v1(?, ?, ?)
