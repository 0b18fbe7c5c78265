-- Peek one timer with its payload and a recurring timer's rule: tenant, queue, timer key.
SELECT tenant_id, queue, timer_key, "partition", deliver_at, visible_at, state, txn, message_id,
       payload, payload_zstd, encrypted, producer_sub, attempts, last_error, claimed_until, created_at, updated_at, db_now,
       recurrence
  FROM queen.timer_peek_v2(?, ?, ?)
