-- A page of a queue's timers, keyset by timer_key, no payload, with a recurring timer's rule:
-- tenant, queue, after key (or NULL), limit.
SELECT timer_key, "partition", deliver_at, visible_at, state, txn, message_id, payload_bytes,
       payload_zstd, encrypted, producer_sub, attempts, last_error, claimed_until, created_at, updated_at, recurrence
  FROM queen.timer_list_v2(?, ?, ?, ?)
