-- The partitions of (tenant, queue). No locks.
SELECT lp.id AS partition_id, lp.name AS partition_name, lp.last_offset, lp.last_write_at
  FROM queen.queues q
  JOIN queen.log_partitions lp ON lp.queue_id = q.id
 WHERE q.tenant_id = ? AND q.name = ?
 ORDER BY lp.name
