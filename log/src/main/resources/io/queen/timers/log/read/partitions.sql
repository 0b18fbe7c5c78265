-- The partitions of (tenant, queue). No locks.
SELECT lp.id, lp.name, lp.last_offset, lp.last_write_at
  FROM queen.queues q
  JOIN queen.log_partitions lp ON lp.queue_id = q.id
 WHERE q.tenant_id = ? AND q.name = ?
 ORDER BY lp.name
