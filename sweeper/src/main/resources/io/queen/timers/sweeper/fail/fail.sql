-- Fail (db/current/R__timer_fail.sql): the timers as named rows (tenant_id, queue, timer_key, claim_token), the error, transient?, transient backoff, backoff base, backoff max (seconds), max attempts.
SELECT tenant_id, queue, timer_key, attempts, retry_at, exhausted
  FROM queen.timer_fail_v2(?::jsonb, ?, ?, make_interval(secs => ?), make_interval(secs => ?), make_interval(secs => ?), ?)
