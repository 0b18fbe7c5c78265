-- Claims due timers for one lease (db/current/R__timer_claim.sql). Parameters: batch size, lease in seconds, per-tenant cap per
-- shard, most held bytes, whether a first timer larger than that comes back alone, the fire budget (FireBudget.Allowances, or null).
-- clock_timestamp(): the database's clock as the rows are produced, which the sweeper plans recurring timers by (DatabaseTime);
-- 8 bytes a row, no round trip of its own.
SELECT tenant_id, queue, timer_key, "partition", deliver_at, visible_at, txn, message_id,
       payload, payload_zstd, encrypted, producer_sub, attempts, last_error, claim_token, claimed_until, held_bytes, trace_context, deaths, recurrence,
       clock_timestamp() AS claimed_at
  FROM queen.timer_claim_v6(?, make_interval(secs => ?), ?, ?, ?, ?::jsonb)
