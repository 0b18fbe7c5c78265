-- The recurring series of the batch's tenants that carry a rule, each up to tenant.max.recurring, and which of the batch's keys hold a rule now.
SELECT tenant_id, queue, timer_key, series FROM queen.timer_tenant_series_v1(?, ?, ?, ?)
