-- V110  The bridge's lock looks each key up through the primary key, whatever the statistics say.
--
-- Measured 2026-12-03 (PipelineBench, durable, quiet machine, `--mode burst --count 50000`): its "ingest
-- alone" phase, 50,000 schedules due in an hour right after the table was vacuumed nearly empty, ran at
-- 953-1,072 commands/s with PostgreSQL at 10.7-12.1 CPU s per 10,000 commands; pg_stat_statements put
-- 934-960 µs per command in bridge_lock_v1 (28-29 calls, 0 rows, 1.6-3.5 s each) against 7 µs in the
-- burst of the same run, where fires keep the table small. auto_explain showed why: VACUUM of a
-- near-empty table leaves reltuples = 0, which the planner trusts until the next ANALYZE, so V028's
-- `(tenant_id, queue, timer_key) IN (SELECT * FROM unnest(...))` became a nested-loop semi join that read
-- the whole primary key and compared every row with every key of the batch (5,982,000 rows removed by
-- the join filter for 2,991 rows x 2,000 keys). The cost grows with the table: a fresh deployment that
-- takes a flood of future schedules meets it first.
-- Decision: the lock is driven by the batch's keys, sorted in the lock order, each looked up through the
-- primary key in a LATERAL subquery (a per-key probe is the only plan a LATERAL reference leaves), and
-- enable_seqscan = off keeps a table the planner believes tiny from being scanned once per key. Lock
-- order unchanged: the keys are sorted (tenant_id, queue, timer_key) with the table's "C" collation
-- before any row is locked, and each row is locked as its key comes. bridge_apply_v4 gets the same
-- setting for its DELETE, which joins the batch's keys to the table.
-- Same signature and result as V028's: a bridge of an earlier version calls it unchanged.
-- PRICE: one index probe per key of the batch, also for keys that are not staged (V028's plan, when it
-- was right, scanned the keys once as a hash); microseconds per key.

CREATE OR REPLACE FUNCTION queen.bridge_lock_v1(p_tenant UUID[], p_queue TEXT[], p_key TEXT[])
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, message_id UUID, in_hands BOOLEAN)
LANGUAGE sql VOLATILE
SET enable_seqscan = off
AS $$
    SELECT t.tenant_id, t.queue, t.timer_key, t.message_id,
           (t.claim_token IS NOT NULL AND t.claimed_until > now())
      FROM (SELECT DISTINCT k.tenant_id, k.queue COLLATE "C" AS queue, k.timer_key COLLATE "C" AS timer_key
              FROM unnest(p_tenant, p_queue, p_key) AS k(tenant_id, queue, timer_key)
             ORDER BY 1, 2, 3) k
     CROSS JOIN LATERAL (
            SELECT r.tenant_id, r.queue, r.timer_key, r.message_id, r.claim_token, r.claimed_until
              FROM queen.log_timers r
             WHERE r.tenant_id = k.tenant_id AND r.queue = k.queue AND r.timer_key = k.timer_key
               FOR UPDATE) t
     ORDER BY t.tenant_id, t.queue, t.timer_key
$$;

ALTER FUNCTION queen.bridge_apply_v4(TEXT, JSONB, JSONB, JSONB, JSONB, INTERVAL) SET enable_seqscan = off;
