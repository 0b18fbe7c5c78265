-- Locks the existing timers of a batch, (tenant_id, queue, timer_key) ascending, with each one's owner (producer_sub).
SELECT tenant_id, queue, timer_key, message_id, in_hands, producer_sub FROM queen.bridge_lock_v2(?, ?, ?)
