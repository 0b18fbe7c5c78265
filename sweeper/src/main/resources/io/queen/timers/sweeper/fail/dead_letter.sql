-- Dead-letter (V035): keys, decompressed payloads, max attempts.
SELECT tenant_id, queue, timer_key, dlq_id, partition_id FROM queen.timer_dead_letter_v1(?, ?, ?, ?, ?)
