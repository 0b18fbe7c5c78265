-- Counts the pending timers of the batch's tenants that schedule new keys, each up to tenant.max.pending.
SELECT tenant_id, pending FROM queen.timer_tenant_pending_v1(?, ?)
