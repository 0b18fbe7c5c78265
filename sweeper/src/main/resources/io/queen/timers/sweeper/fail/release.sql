-- Release (db/current/R__timer_fail.sql): hand claimed rows back untouched; only rows that still carry the given token. The timers as named rows (tenant_id, queue, timer_key, claim_token).
SELECT queen.timer_release_v2(?::jsonb) AS touched
