-- Dead-letter (db/current/R__timer_dead_letter.sql): the timers as named rows (tenant_id, queue, timer_key, claim_token: ours, live), max attempts.
SELECT tenant_id, queue, timer_key, dlq_id, partition_id FROM queen.timer_dead_letter_v3(?::jsonb, ?)
