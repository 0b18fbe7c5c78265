-- V031  The claim (DESIGN.md §6.2): take due timers into this sweeper's hands for one lease.
--
-- queen.timer_claim_v1(p_batch, p_lease, p_per_tenant) claims up to p_batch visible timers and
-- returns them in their PRE-claim visible_at order, which is the order they enter the log.
--
-- How, and why each part is so:
--  * Per shard (0..63), one range scan of idx_log_timers_visible (shard, visible_at) with
--    visible_at <= now() in visible_at order: zero rows filtered (seed: "the claim is a range scan
--    per shard"). Leaderless sweepers all scan all 64 shards; hashing the key spreads every burst.
--  * FOR UPDATE SKIP LOCKED INSIDE the per-shard scan (a LATERAL subquery), so the LIMIT counts only
--    rows this call actually got: two sweepers never wait for each other and never take the same row.
--  * Per-shard slice = max(ceil(p_batch / 64), 8). The floor of 8 keeps a small batch from turning
--    into 64 one-row scans; the slice is what bounds the rows locked by one call (64 x slice).
--  * Round-robin over tenants: within a shard a tenant gets at most p_per_tenant rows, and the cut to
--    p_batch takes every tenant's first row, then every tenant's second, ... PRICE, stated: the
--    round-robin works over the rows each shard's scan sees (its earliest slice), because the only
--    index is (shard, visible_at) and has no tenant column (seed: no other secondary index). Two
--    tenants due in the same window are interleaved; a tenant whose timers are all due AFTER another
--    tenant's backlog waits for that backlog in visible_at order (it is not late yet relative to it).
--    With one tenant the cap makes a claim at most 64 x p_per_tenant rows.
--  * Order. Rows come back in pre-claim visible_at order, and that is the order they enter the log.
--    Across claims, one sweeper keeps visible_at order as long as no shard holds more than one slice
--    of due rows; under a deeper backlog a claim takes each shard's earliest slice, so order across
--    claims is visible_at order per shard. PRICE, deliberately paid: a strict global order would have to
--    stop at the earliest "full" shard's last row for EVERY tenant (unseen rows beyond it may belong to
--    anyone), shrinking every claim under a backlog and defeating the round-robin above. Several sweepers interleave
--    their fires anyway; the log's offsets, not visible_at, are the order consumers see.
--  * Each claimed row gets claimed_until = now() + p_lease and its OWN new claim_token. The fire
--    verifies every row by its token, so a row reclaimed after a lease expiry (new token) can never be
--    fired by the sweeper that lost it: its fire comes back `stale`.
--  * PRICE (seed): the UPDATE writes claimed_until, which changes the indexed generated column
--    visible_at, so the claim is never HOT. Bought deliberately: an index on deliver_at would keep it
--    HOT but make every pass re-read every timer serving a backoff.
--  * updated_at is not touched: it belongs to the command side (schedule/reschedule).
--
-- Lock order (DESIGN.md §8): this statement locks queen.log_timers rows only, and nothing else. It
-- acquires them per shard in visible_at order, not in primary-key order; that is safe because every
-- acquisition is SKIP LOCKED: the claim never waits, so it can never be part of a wait cycle. The
-- UPDATE then writes rows the statement already holds.
--
-- Due-ness: now() is PostgreSQL's clock (statement start of this one-statement transaction).

CREATE OR REPLACE FUNCTION queen.timer_claim_v1(p_batch INT, p_lease INTERVAL, p_per_tenant INT)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, "partition" TEXT, deliver_at TIMESTAMPTZ,
               visible_at TIMESTAMPTZ, txn TEXT, message_id UUID, payload BYTEA, payload_zstd BOOLEAN,
               encrypted BOOLEAN, producer_sub TEXT, attempts INT, last_error TEXT,
               claim_token UUID, claimed_until TIMESTAMPTZ)
LANGUAGE sql
VOLATILE
AS $$
WITH candidates AS MATERIALIZED (
    -- Lock order: queen.log_timers rows only, SKIP LOCKED (never waits).
    SELECT c.row_ctid, c.shard, c.tenant_id, c.queue, c.timer_key, c.visible_at
      FROM generate_series(0, 63) AS s(shard)
     CROSS JOIN LATERAL (
            SELECT t.ctid AS row_ctid, t.shard, t.tenant_id, t.queue, t.timer_key, t.visible_at
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
    SELECT r.row_ctid, r.tenant_id, r.queue, r.timer_key, r.visible_at,
           row_number() OVER (PARTITION BY r.tenant_id ORDER BY r.visible_at, r.queue, r.timer_key) AS turn
      FROM ranked r
     WHERE r.tenant_rank <= p_per_tenant
),
picked AS MATERIALIZED (
    SELECT k.row_ctid, k.tenant_id, k.queue, k.timer_key, k.visible_at
      FROM kept k
     ORDER BY k.turn, k.visible_at, k.tenant_id, k.queue, k.timer_key
     LIMIT p_batch
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
       c.last_error, c.claim_token, c.claimed_until
  FROM claimed c
  JOIN picked p ON p.tenant_id = c.tenant_id AND p.queue = c.queue AND p.timer_key = c.timer_key
 ORDER BY p.visible_at, c.tenant_id, c.queue, c.timer_key;
$$;
