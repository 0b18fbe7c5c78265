-- V125  Fair for every tenant (issue 24, point 8): an index for the claim's per-tenant slices and the quota's count.
--
-- Before: the claim read, per shard, the earliest slice of idx_log_timers_visible (shard, visible_at) and
-- went round-robin over the tenants it found there. A tenant that flooded back-dated timers (deliverAt in
-- 1970 was accepted and ordered as such) filled every shard's slice, so another tenant's due timers
-- waited for the whole flood.
--
-- Now (the functions live in db/current/):
--  1. bridge_apply_v4 orders a back-dated timer no earlier than its staging: visible_at =
--     greatest(deliver_at, now()) at staging and at reschedule (R__bridge_apply.sql says how, without a
--     change to the generated column). deliver_at stays what the producer said.
--  2. timer_claim_v4 adds to each shard's slice a slice per tenant with due timers, taken from this
--     index, for every tenant the shard slices under-serve (R__timer_claim.sql).
--  3. timer_tenant_pending_v1 counts a tenant's pending timers up to a cap, for the bridge's
--     bridge.tenant.max.pending (reject tenant_quota); the primary key (tenant_id, ...) serves it, not this index.
--
-- idx_log_timers_tenant_visible (tenant_id, visible_at): a tenant's earliest due timers are one range scan,
-- and the distinct tenants one probe each (a skip scan over its leading column).
--
-- PRICE: one more btree entry per staged row (about 40 bytes with its tuple header: a 16-byte uuid and an
-- 8-byte timestamp) and one more index insertion at every write of visible_at: the schedule, the
-- reschedule, every claim and every failed fire. None of those was HOT before (idx_log_timers_visible
-- already indexes visible_at), so this adds an index write, not a heap rewrite. CREATE INDEX (not
-- CONCURRENTLY: Flyway runs a migration in a transaction) holds a SHARE lock on queen.log_timers while it
-- builds: schedules and claims wait for it, on a million pending timers about a second.

CREATE INDEX IF NOT EXISTS idx_log_timers_tenant_visible
    ON queen.log_timers (tenant_id, visible_at);
