-- Claims due timers for one lease (V050; V090 adds the trace context). Parameters: batch size, lease in seconds, per-tenant cap per shard,
-- most held bytes, whether a first timer larger than that comes back alone.
SELECT tenant_id, queue, timer_key, "partition", deliver_at, visible_at, txn, message_id,
       payload, payload_zstd, encrypted, producer_sub, attempts, last_error, claim_token, claimed_until, held_bytes, trace_context
  FROM queen.timer_claim_v3(?, make_interval(secs => ?), ?, ?, ?)
