-- One fire, one transaction (R__timer_fire.sql, timer_fire_v3): the segments as named rows (JsonRows), then their blobs and their
-- txn hashes back to back. refused: a refused segment's dead-lettered frame positions (0-based), NULL otherwise.
SELECT seg, verdict, partition_id, base_offset, created_at, refused
  FROM queen.timer_fire_v3(?::jsonb, ?, ?)
 ORDER BY seg
