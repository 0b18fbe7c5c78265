-- One segment into a partition the caller has provisioned (and usually pre-locked) (V002).
-- Lock order: the partition row, then leaves (log_segments, log_txns).
SELECT base_offset, created_at FROM queen.log_append_v1(?, ?, ?, ?)
