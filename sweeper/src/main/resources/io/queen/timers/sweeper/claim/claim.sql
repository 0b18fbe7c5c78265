-- Claims due timers for one lease (V031). Parameters: batch size, lease in seconds, per-tenant cap per shard.
SELECT tenant_id, queue, timer_key, "partition", deliver_at, visible_at, txn, message_id,
       payload, payload_zstd, encrypted, producer_sub, attempts, last_error, claim_token, claimed_until
  FROM queen.timer_claim_v1(?, make_interval(secs => ?), ?)
