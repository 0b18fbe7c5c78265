-- Mark claimed rows as fired alone (db/current/R__timer_fail.sql): a lease of them that runs out now spends an attempt.
-- The timers as named rows (tenant_id, queue, timer_key, claim_token).
SELECT queen.timer_hold_alone_v1(?::jsonb) AS touched
