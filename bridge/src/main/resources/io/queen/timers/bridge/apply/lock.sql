-- Locks the existing timers of a batch, (tenant_id, queue, timer_key) ascending (V028).
SELECT tenant_id, queue, timer_key, message_id, in_hands FROM queen.bridge_lock_v1(?, ?, ?)
