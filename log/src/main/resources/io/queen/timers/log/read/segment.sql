-- One segment by primary key. No locks. Parameters: partition id, base offset.
SELECT end_offset, blob, created_at FROM queen.log_segments WHERE partition_id = ? AND base_offset = ?
