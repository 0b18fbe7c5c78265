-- Locks the existing timers of a batch, (tenant_id, queue, timer_key) ascending (V102 over V028): the timers as named rows (tenant_id, queue, timer_key).
SELECT tenant_id, queue, timer_key, message_id, in_hands FROM queen.bridge_lock_v2(?::jsonb)
