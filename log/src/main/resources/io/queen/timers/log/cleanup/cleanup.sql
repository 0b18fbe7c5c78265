-- Delete at most max-per-call dead partitions idle for the given milliseconds by the PostgreSQL clock (V003, V061).
-- Lock order: queen.log_partitions (ascending id, SKIP LOCKED), then leaves (log_txns explicitly, the rest by cascade).
-- Parameters: idle milliseconds, max per call.
SELECT id FROM queen.log_cleanup_partitions_v1(now() - ? * interval '1 millisecond', ?) AS id
