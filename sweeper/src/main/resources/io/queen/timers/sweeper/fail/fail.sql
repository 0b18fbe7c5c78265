-- Fail (V034): keys, tokens, the error, transient?, transient backoff, backoff base, backoff max (seconds), max attempts.
SELECT tenant_id, queue, timer_key, attempts, retry_at, exhausted
  FROM queen.timer_fail_v1(?, ?, ?, ?, ?, ?, make_interval(secs => ?), make_interval(secs => ?), make_interval(secs => ?), ?)
