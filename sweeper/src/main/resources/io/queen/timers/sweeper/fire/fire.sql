-- One fire, one transaction (V033): per-segment arrays, blobs and hashes back to back, per-row segments, keys and tokens.
SELECT seg, verdict, partition_id, base_offset, created_at
  FROM queen.timer_fire_v1(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
 ORDER BY seg
