-- Skip catchUp none's missed occurrences (db/current/R__timer_cadence.sql): the timers as named rows
-- (tenant_id, queue, timer_key, claim_token, plan). Returns how many were skipped.
SELECT count(*) AS skipped FROM queen.timer_skip_v1(?::jsonb)
