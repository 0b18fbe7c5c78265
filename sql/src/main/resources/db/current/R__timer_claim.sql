-- The claim: take due timers into this sweeper's hands for one lease, bounded by rows and by bytes.
--
-- queen.timer_claim_v6(p_batch, p_lease, p_per_tenant, p_max_bytes, p_lone_oversize, p_budget) claims up to
-- p_batch visible timers and returns them in their PRE-claim visible_at order, the order they enter
-- the log, each with its held_bytes, trace context, deaths and recurrence.
-- queen.timer_hold_alone_v1 (R__timer_fail.sql, beside the other functions on held rows) marks suspects a
-- sweeper is about to fire alone (queen.log_timers.held_alone, V002).
--
-- How, and why each part is so:
--  * Per shard (0..63), one range scan of idx_log_timers_visible (shard, visible_at) with
--    visible_at <= now(): zero rows filtered. Leaderless sweepers all scan all 64 shards; hashing the
--    key spreads every burst.
--  * FOR UPDATE SKIP LOCKED INSIDE the per-shard scan (a LATERAL subquery), so the LIMIT counts only
--    rows this call actually got: two sweepers never wait for each other and never take the same row.
--  * Per-shard slice = max(ceil(p_batch / 64), 8): the floor keeps a small batch from turning into 64
--    one-row scans; the slice bounds the rows locked by one call (64 x slice).
--  * Per tenant (docs/decisions.md#claim-order-and-fairness): the shard slices see only each shard's earliest rows, so a
--    tenant with a deep backlog of due timers fills all 64 of them and another tenant's due timers would
--    wait for the whole backlog. So, beside them, every tenant with a due timer that the shard slices
--    gave fewer than its share (ceil(p_batch / tenants with due timers)) gets a slice of its own earliest
--    due timers, one range scan of idx_log_timers_tenant_visible (tenant_id, visible_at). The tenants are
--    found by a skip scan of that index (one probe per tenant with a staged timer, one more to see that
--    it has a due one). Together with the staging rule (a back-dated timer is visible no earlier than its
--    staging, R__bridge_apply.sql) a flood of one tenant delays another's due timers by about one claim.
--  * The fire budget (p_budget = {"near_ms", "allowance", "tenants": {"<tenant_id>": n}}; NULL: none;
--    docs/decisions.md#a-per-tenant-fire-budget). The shares above put a quiet tenant's due row in the next
--    claim, but when one tenant's due work saturates the sweeper that row still waits for the cycle in flight,
--    which is full of the other tenant's rows (RecurringFairnessIT: one tenant's thousand one-second series
--    beside a quiet tenant; that section has the figures). So while TWO
--    tenants or more have a timer (out of anybody's hands) visible within near_ms, each tenant gets at most
--    its allowance of rows per claim: the tokens of its bucket in the calling process (io.queen.timers.sweeper
--    .claim.FireBudget, sweeper.tenant.fires.per.second), "allowance" for a tenant the caller has no bucket for.
--    Cycles stay short, and what a held tenant leaves stays due, claimed by a later claim in visible_at order.
--    Alone (no other tenant's timer within near_ms), a tenant is never held. While it binds, the shard scans
--    take one row per shard (a lease that ran out is found only by them: the tenant index leaves rows with a
--    token out) instead of a slice, so a held tenant's backlog is not locked only to be cut.
--  * Round-robin over tenants: within a shard a tenant gets at most least(p_per_tenant, slice) rows, and
--    the cut to p_batch takes every tenant's first row, then every tenant's second, ...
--  * Bytes: rows are kept in pick order while their running sum of held_bytes stays within
--    p_max_bytes. held_bytes = payload_bytes (the payload's length as the frame carries it, written by
--    the bridge; docs/guarantees.md) or, for a row without it, octet_length(payload) read from
--    the TOAST pointer without detoasting; + octet_length(txn) + 64. A timer larger than p_max_bytes
--    alone is returned ALONE when p_lone_oversize (the sweeper asks so for the first claim of a cycle):
--    it fires on its own instead of never. Without the bound, 600 due timers of ~880 KB made one claim
--    return ~450 MB to a 256 MB sweeper; counting stored bytes only, 512 zstd-compressed 1 MiB payloads
--    did the same once decompressed.
--  * A visible row that still carries a token is a lease that ran out in a sweeper's hands (it died,
--    stalled past the lease, or lost the database mid-fire; fail and release clear the token): the claim
--    counts a death (deaths + 1) and says so in last_error ('abandoned: ...'). It spends an attempt only
--    when the sweeper was firing that timer alone (held_alone): then nothing else it held can be
--    blamed, so a timer that kills its process reaches sweeper.max.attempts and is dead-lettered instead
--    of killing every claim it is in, while a timer that merely was in hand when its sweeper was paused,
--    killed or cut from the database spends nothing (it fires in a smaller group next time).
--  * Each claimed row gets claimed_until = now() + p_lease and its OWN new claim_token: the fire
--    verifies every row by its token, so a row reclaimed after a lease expiry can never be fired by the
--    sweeper that lost it (its fire comes back `stale`). updated_at belongs to the command side.
--
-- Lock order: queen.log_timers rows only, acquired per shard, then per tenant, in visible_at order, not
-- in primary-key order; safe because every acquisition is SKIP LOCKED: the claim never waits, so it is never part of
-- a wait cycle. Due-ness is PostgreSQL's clock (now() of this one-statement transaction).
--
-- PRICE:
--  * Under a deep backlog order across claims is visible_at order per shard and per tenant; a strict
--    global order would shrink every claim under a backlog. The log's offsets, not visible_at, are the
--    order consumers see.
--  * The fire budget: nothing more per claim than without it (the head of each tenant's range, one probe,
--    replaces the probe that asked whether it had a due timer; a count over those heads in memory; one jsonb
--    read per due tenant and per kept row). While it binds, 64 one-row shard scans instead of 64 slices. A held
--    tenant's due rows wait (their lateness is their own; a series' catchUp decides what its late occurrences
--    become, docs/recurring.md), even when the sweeper has time to spare: the budget is a rate, not a share of
--    what is free. A lease that ran out behind a held tenant's backlog in its shard waits for that backlog.
--  * The tenant slices: 2 index probes per tenant with a staged timer per claim (linear in tenants,
--    which the operator configures: a producer cannot make new ones), plus for an under-served tenant
--    its slice. Rows locked by both sources or cut by the per-shard cap are released at commit.
--    One more index on every write of visible_at (V002 says what it costs).
--  * The UPDATE writes claimed_until, which changes the indexed visible_at: the claim is never HOT
--    (docs/decisions.md#visible_at-is-stored-and-the-claim-is-never-hot).
--  * Rows cut by p_batch or by bytes were locked for this statement and are released at its commit,
--    unclaimed. For rows without payload_bytes the bytes are the STORED ones (the sweeper bounds their
--    decompression itself).
--  * A timer held by a sweeper killed, paused past the lease or cut from the database for an unrelated
--    reason spends no attempt unless that happens during its own lone fire; it is fired in smaller
--    groups afterwards (docs/guarantees.md#a-death-alone-is-an-attempt).

-- The lease a claim may take: at most the owner's queen.timer_settings.max_lease (V006), never only what the
-- caller asks: a claimed timer cannot be cancelled, so an unbounded lease could hold a due
-- timer out of its producer's reach for years. Refused, not shortened: a sweeper whose lease the database cut
-- would fire past it. STABLE and called with no column, so the claim evaluates it once, before any row.
CREATE OR REPLACE FUNCTION queen.timer_lease_v1(p_lease INTERVAL)
RETURNS INTERVAL
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
    v_max INTERVAL;
BEGIN
    SELECT s.max_lease INTO v_max FROM queen.timer_settings s;
    v_max := coalesce(v_max, INTERVAL '1 hour');
    IF p_lease IS NULL OR p_lease <= INTERVAL '0' OR p_lease > v_max THEN
        RAISE EXCEPTION 'timer claim: lease % is not within (0, %] (queen.timer_settings.max_lease)', p_lease, v_max
            USING ERRCODE = '22023';
    END IF;
    RETURN p_lease;
END
$$;

-- The claim, returning trace_context for the frame, deaths for the sweeper's suspect groups and a
-- recurring timer's rule, from which the sweeper plans its successor; with the caller's per-tenant fire
-- budget (p_budget; NULL: none).
CREATE OR REPLACE FUNCTION queen.timer_claim_v6(p_batch INT, p_lease INTERVAL, p_per_tenant INT, p_max_bytes BIGINT,
                                                p_lone_oversize BOOLEAN, p_budget JSONB)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, "partition" TEXT, deliver_at TIMESTAMPTZ,
               visible_at TIMESTAMPTZ, txn TEXT, message_id UUID, payload BYTEA, payload_zstd BOOLEAN,
               encrypted BOOLEAN, producer_sub TEXT, attempts INT, last_error TEXT,
               claim_token UUID, claimed_until TIMESTAMPTZ, held_bytes BIGINT, trace_context BYTEA, deaths INT,
               recurrence JSONB)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
VOLATILE
AS $$
#variable_conflict use_column
BEGIN
    -- PL/pgSQL for its cached plan: as a LANGUAGE sql function with SECURITY DEFINER and SET it was planned at every
    -- call (docs/decisions.md#what-the-fire-still-pays-per-segment-and-why has what that cost); the output
    -- columns' names are the table's, hence use_column
    RETURN QUERY
WITH RECURSIVE tenants (tenant_id) AS (
    -- Every tenant with a staged timer out of anybody's hands: a skip scan, one probe of the partial
    -- idx_log_timers_tenant_visible per tenant (claim_token IS NULL is its predicate: V002 says why).
    (SELECT t.tenant_id FROM queen.log_timers t WHERE t.claim_token IS NULL ORDER BY t.tenant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT t.tenant_id FROM queen.log_timers t
             WHERE t.tenant_id > x.tenant_id AND t.claim_token IS NULL ORDER BY t.tenant_id LIMIT 1)
      FROM tenants x
     WHERE x.tenant_id IS NOT NULL
),
tenant_next AS MATERIALIZED (
    -- ... and its earliest visible_at out of anybody's hands (one more probe each, the head of its range).
    SELECT x.tenant_id,
           (SELECT t.visible_at FROM queen.log_timers t
             WHERE t.tenant_id = x.tenant_id AND t.claim_token IS NULL ORDER BY t.visible_at LIMIT 1) AS next_visible
      FROM tenants x
     WHERE x.tenant_id IS NOT NULL
),
due_tenants AS MATERIALIZED (
    -- The tenants with a due timer; the number of them sets each one's share.
    SELECT n.tenant_id FROM tenant_next n WHERE n.next_visible <= now()
),
budget AS MATERIALIZED (
    -- The fire budget binds only while two tenants or more have a timer visible within p_budget.near_ms (the
    -- sweeper's sweeper.sleep.near): then a tenant gets at most its allowance of rows in this claim, the caller's
    -- count from its token bucket (p_budget.tenants, else p_budget.allowance). A lone tenant is never held.
    SELECT p_budget IS NOT NULL
           AND (SELECT count(*) FROM tenant_next n
                 WHERE n.next_visible <= now() + make_interval(secs => (p_budget ->> 'near_ms')::numeric / 1000)) >= 2 AS binds,
           (p_budget ->> 'allowance')::int AS allowance,
           coalesce(p_budget -> 'tenants', '{}'::jsonb) AS tenants
),
shard_rows AS MATERIALIZED (
    -- Lock order: queen.log_timers rows only, SKIP LOCKED (never waits). While the budget binds, one row per
    -- shard: enough to find a lease that ran out (not in the tenant index), and no more of a held tenant's
    -- backlog locked only to be cut; the tenant slices below serve every due tenant within its allowance.
    SELECT c.row_ctid, c.shard, c.tenant_id, c.queue, c.timer_key, c.visible_at, c.held_bytes
      FROM generate_series(0, 63) AS s(shard)
     CROSS JOIN LATERAL (
            SELECT t.ctid AS row_ctid, t.shard, t.tenant_id, t.queue, t.timer_key, t.visible_at,
                   coalesce(t.payload_bytes, octet_length(t.payload))::bigint + octet_length(t.txn) + 64 AS held_bytes
              FROM queen.log_timers t
             WHERE t.shard = s.shard::smallint
               AND t.visible_at <= now()
             ORDER BY t.visible_at
             LIMIT CASE WHEN (SELECT b.binds FROM budget b) THEN 1 ELSE greatest(ceil(p_batch / 64.0)::int, 8) END
               FOR UPDATE OF t SKIP LOCKED) c
     WHERE queen.timer_lease_v1(p_lease) IS NOT NULL -- refuses a lease beyond the owner's maximum, once per call
),
tenant_rows AS MATERIALIZED (
    -- Per due tenant that the shard slices gave fewer than its share (ceil(p_batch / due tenants), at most
    -- what the per-shard cap lets one tenant have, 64 x least(p_per_tenant, slice), and at most its allowance
    -- while the budget binds): its own earliest due timers, one range scan of (tenant_id, visible_at).
    -- Lock order: queen.log_timers rows only, SKIP LOCKED.
    SELECT c.row_ctid, c.shard, c.tenant_id, c.queue, c.timer_key, c.visible_at, c.held_bytes
      FROM (SELECT d.tenant_id,
                   least(ceil(p_batch::numeric / (SELECT count(*) FROM due_tenants))::int,
                         64 * least(p_per_tenant, greatest(ceil(p_batch / 64.0)::int, 8)),
                         CASE WHEN b.binds THEN coalesce((b.tenants ->> d.tenant_id::text)::int, b.allowance) END) AS share
              FROM due_tenants d CROSS JOIN budget b) d
     CROSS JOIN LATERAL (
            SELECT t.ctid AS row_ctid, t.shard, t.tenant_id, t.queue, t.timer_key, t.visible_at,
                   coalesce(t.payload_bytes, octet_length(t.payload))::bigint + octet_length(t.txn) + 64 AS held_bytes
              FROM queen.log_timers t
             WHERE t.tenant_id = d.tenant_id
               AND t.claim_token IS NULL
               AND t.visible_at <= now()
             ORDER BY t.visible_at
             LIMIT CASE WHEN (SELECT count(*) FROM shard_rows r WHERE r.tenant_id = d.tenant_id) >= d.share THEN 0
                        ELSE d.share END
               FOR UPDATE OF t SKIP LOCKED) c
),
candidates AS (
    -- A row both sources found is one candidate (this statement's own lock does not make it skipped).
    SELECT * FROM shard_rows
    UNION
    SELECT * FROM tenant_rows
),
ranked AS (
    SELECT c.*,
           row_number() OVER (PARTITION BY c.shard, c.tenant_id
                              ORDER BY c.visible_at, c.queue, c.timer_key) AS tenant_rank
      FROM candidates c
),
kept AS (
    -- A tenant's cap per shard: p_per_tenant, and never more than the shard's slice (what the shard scan
    -- alone could give; the tenant slices must not widen it).
    SELECT r.row_ctid, r.tenant_id, r.queue, r.timer_key, r.visible_at, r.held_bytes,
           row_number() OVER (PARTITION BY r.tenant_id ORDER BY r.visible_at, r.queue, r.timer_key) AS turn
      FROM ranked r
     WHERE r.tenant_rank <= least(p_per_tenant, greatest(ceil(p_batch / 64.0)::int, 8))
),
by_rows AS MATERIALIZED (
    -- While the budget binds, a tenant's rows beyond its allowance are cut here (its earliest kept).
    SELECT k.row_ctid, k.tenant_id, k.queue, k.timer_key, k.visible_at, k.held_bytes,
           row_number() OVER (ORDER BY k.turn, k.visible_at, k.tenant_id, k.queue, k.timer_key) AS pick_order
      FROM kept k CROSS JOIN budget b
     WHERE NOT b.binds OR k.turn <= coalesce((b.tenants ->> k.tenant_id::text)::int, b.allowance)
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
           claim_token   = gen_random_uuid(),
           -- SET reads the row as it was: a token still set on a visible row is a lease that ran out in a
           -- sweeper's hands (fail and release clear the token): a death. It is an attempt only if that
           -- sweeper was firing this timer alone (held_alone).
           deaths        = least(t.deaths + CASE WHEN t.claim_token IS NOT NULL THEN 1 ELSE 0 END, 32767),
           attempts      = t.attempts + CASE WHEN t.claim_token IS NOT NULL AND t.held_alone THEN 1 ELSE 0 END,
           held_alone    = FALSE,
           last_error    = CASE WHEN t.claim_token IS NOT NULL AND t.held_alone
                                THEN 'abandoned: the lease ran out while a sweeper fired this timer alone (it died, stalled'
                                     || ' past the lease, or lost the database mid-fire); attempt ' || (t.attempts + 1)
                                WHEN t.claim_token IS NOT NULL
                                THEN 'abandoned: the lease ran out while a sweeper held this timer among others; death '
                                     || (t.deaths + 1) || ', no attempt spent'
                                ELSE t.last_error END
     WHERE t.ctid = ANY (ARRAY(SELECT p.row_ctid FROM picked p))
    RETURNING t.tenant_id, t.queue, t.timer_key, t."partition", t.deliver_at,
              t.txn, t.message_id, t.payload, t.payload_zstd, t.encrypted, t.producer_sub, t.attempts,
              t.last_error, t.claim_token, t.claimed_until, t.trace_context, t.deaths, t.recurrence
)
SELECT c.tenant_id, c.queue, c.timer_key, c."partition", c.deliver_at, p.visible_at,
       c.txn, c.message_id, c.payload, c.payload_zstd, c.encrypted, c.producer_sub, c.attempts,
       c.last_error, c.claim_token, c.claimed_until, p.held_bytes, c.trace_context, c.deaths::int, c.recurrence
  FROM claimed c
  JOIN picked p ON p.tenant_id = c.tenant_id AND p.queue = c.queue AND p.timer_key = c.timer_key
 ORDER BY p.visible_at, c.tenant_id, c.queue, c.timer_key;
END
$$;
