-- One fire, one transaction (V101): the segments as named rows (JsonRows), then their blobs and their txn hashes back to back.
SELECT seg, verdict, partition_id, base_offset, created_at
  FROM queen.timer_fire_v2(?::jsonb, ?, ?)
 ORDER BY seg
