-- Pre-lock: queen.log_partitions rows FOR UPDATE in ascending id, one statement (V002).
SELECT id FROM queen.log_lock_partitions_v1(?) AS id
