-- log_txns rows of every partition of (tenant, queue) whose hashes contain the wanted 16 bytes
-- somewhere; the caller keeps only 16-byte-aligned matches and confirms them by decoding. No locks.
-- Parameters: tenant, queue, hash.
SELECT lp.id AS partition_id, lp.name AS partition_name, t.base_offset, t.end_offset, t.hashes
  FROM queen.queues q
  JOIN queen.log_partitions lp ON lp.queue_id = q.id
  JOIN queen.log_txns t ON t.partition_id = lp.id
 WHERE q.tenant_id = ? AND q.name = ?
   AND position(?::bytea IN t.hashes) > 0
 ORDER BY lp.name, t.base_offset
