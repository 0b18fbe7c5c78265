-- V050  The claim, bounded by bytes as well as rows: queen.timer_claim_v2.
--
-- Why: timer_claim_v1 (V031) bounds a claim by rows only. A burst of 600 timers with ~880 KB
-- incompressible payloads, all due at one instant, made one claim of 512 rows return ~450 MB to a
-- sweeper running with -Xmx256m: OutOfMemoryError in every thread, nothing fired, and after the lease
-- the next sweeper claimed the same rows and died the same way. The bytes a row will cost are known
-- here without reading the payload: octet_length() of a bytea reads the length from the TOAST pointer
-- (it does not detoast), so the bound costs no I/O.
--
-- timer_claim_v2(p_batch, p_lease, p_per_tenant, p_max_bytes, p_lone_oversize) is v1 (same scan, same
-- SKIP LOCKED, same per-shard slice, same round-robin over tenants, same order; see V031 for why each is
-- so) with one more cut: rows are kept in pick order while their running sum of held_bytes stays
-- within p_max_bytes. held_bytes = octet_length(payload) + octet_length(txn) + 64 (the fixed columns),
-- returned per row so the sweeper counts a cycle's bytes with the same measure. A timer larger than
-- p_max_bytes on its own is returned ALONE when p_lone_oversize is true (the sweeper asks so only for
-- the first claim of a cycle): it fires on its own instead of never. With p_lone_oversize false such a
-- row is left for the next cycle.
--
-- PRICE: the rows cut by bytes were locked by the scan for the duration of this statement (as v1's rows
-- cut by p_batch are) and are released at its commit, unclaimed; a backlog of large timers is claimed a
-- few at a time, which is the point. The bytes are the STORED ones: a payload stored zstd-compressed by
-- the bridge may be larger once decompressed (by at most bridge.payload.max.bytes each).
--
-- Lock order: as V031 -- queen.log_timers rows only, SKIP LOCKED, never waits. v1 stays for a sweeper of
-- the previous build during a rolling upgrade.

CREATE OR REPLACE FUNCTION queen.timer_claim_v2(p_batch INT, p_lease INTERVAL, p_per_tenant INT, p_max_bytes BIGINT,
                                                p_lone_oversize BOOLEAN)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, "partition" TEXT, deliver_at TIMESTAMPTZ,
               visible_at TIMESTAMPTZ, txn TEXT, message_id UUID, payload BYTEA, payload_zstd BOOLEAN,
               encrypted BOOLEAN, producer_sub TEXT, attempts INT, last_error TEXT,
               claim_token UUID, claimed_until TIMESTAMPTZ, held_bytes BIGINT)
LANGUAGE sql
VOLATILE
AS $$
WITH candidates AS MATERIALIZED (
    -- Lock order: queen.log_timers rows only, SKIP LOCKED (never waits).
    SELECT c.row_ctid, c.shard, c.tenant_id, c.queue, c.timer_key, c.visible_at, c.held_bytes
      FROM generate_series(0, 63) AS s(shard)
     CROSS JOIN LATERAL (
            SELECT t.ctid AS row_ctid, t.shard, t.tenant_id, t.queue, t.timer_key, t.visible_at,
                   octet_length(t.payload)::bigint + octet_length(t.txn) + 64 AS held_bytes
              FROM queen.log_timers t
             WHERE t.shard = s.shard::smallint
               AND t.visible_at <= now()
             ORDER BY t.visible_at
             LIMIT greatest(ceil(p_batch / 64.0)::int, 8)
               FOR UPDATE OF t SKIP LOCKED) c
),
ranked AS (
    SELECT c.*,
           row_number() OVER (PARTITION BY c.shard, c.tenant_id
                              ORDER BY c.visible_at, c.queue, c.timer_key) AS tenant_rank
      FROM candidates c
),
kept AS (
    SELECT r.row_ctid, r.tenant_id, r.queue, r.timer_key, r.visible_at, r.held_bytes,
           row_number() OVER (PARTITION BY r.tenant_id ORDER BY r.visible_at, r.queue, r.timer_key) AS turn
      FROM ranked r
     WHERE r.tenant_rank <= p_per_tenant
),
by_rows AS MATERIALIZED (
    SELECT k.row_ctid, k.tenant_id, k.queue, k.timer_key, k.visible_at, k.held_bytes,
           row_number() OVER (ORDER BY k.turn, k.visible_at, k.tenant_id, k.queue, k.timer_key) AS pick_order
      FROM kept k
     ORDER BY k.turn, k.visible_at, k.tenant_id, k.queue, k.timer_key
     LIMIT p_batch
),
picked AS MATERIALIZED (
    SELECT b.row_ctid, b.tenant_id, b.queue, b.timer_key, b.visible_at, b.held_bytes
      FROM (SELECT b.*, sum(b.held_bytes) OVER (ORDER BY b.pick_order) AS running FROM by_rows b) b
     WHERE b.running <= p_max_bytes
        OR (b.pick_order = 1 AND p_lone_oversize)
),
claimed AS (
    -- Lock order: rows already held by `candidates`; no new lock is taken. Addressed by ctid (a TID
    -- scan: stable while we hold the row lock), so the plan never depends on table statistics.
    UPDATE queen.log_timers t
       SET claimed_until = now() + p_lease,
           claim_token   = gen_random_uuid()
     WHERE t.ctid = ANY (ARRAY(SELECT p.row_ctid FROM picked p))
    RETURNING t.tenant_id, t.queue, t.timer_key, t."partition", t.deliver_at,
              t.txn, t.message_id, t.payload, t.payload_zstd, t.encrypted, t.producer_sub, t.attempts,
              t.last_error, t.claim_token, t.claimed_until
)
SELECT c.tenant_id, c.queue, c.timer_key, c."partition", c.deliver_at, p.visible_at,
       c.txn, c.message_id, c.payload, c.payload_zstd, c.encrypted, c.producer_sub, c.attempts,
       c.last_error, c.claim_token, c.claimed_until, p.held_bytes
  FROM claimed c
  JOIN picked p ON p.tenant_id = c.tenant_id AND p.queue = c.queue AND p.timer_key = c.timer_key
 ORDER BY p.visible_at, c.tenant_id, c.queue, c.timer_key;
$$;
