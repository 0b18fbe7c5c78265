-- The segments of (tenant, queue, partition) that hold offsets from..to, in offset order. No locks.
-- Parameters: from, from, to, tenant, queue, partition.
-- The segment holding `from` is the last one starting at or before it: one backward probe of the
-- primary key (max() over an index prefix). From there the primary key is range-scanned up to `to`,
-- so no segment outside the range is read, let alone decompressed.
SELECT lp.id AS partition_id, s.base_offset, s.end_offset, s.created_at, s.blob
  FROM queen.queues q
  JOIN queen.log_partitions lp ON lp.queue_id = q.id
 CROSS JOIN LATERAL (SELECT coalesce(max(f.base_offset), ?) AS start
                       FROM queen.log_segments f
                      WHERE f.partition_id = lp.id AND f.base_offset <= ?) b
  JOIN queen.log_segments s ON s.partition_id = lp.id AND s.base_offset >= b.start AND s.base_offset <= ?
 WHERE q.tenant_id = ? AND q.name = ? AND lp.name = ?
 ORDER BY s.base_offset
