-- V002  queen.log_timers: where a timer waits before it is a message
--       (docs/decisions.md#a-timer-is-not-in-the-log).
--
-- A timer is a message that is not in the log yet. It cannot live in the log: the pop is a
-- contiguous offset scan that a future frame would block or skip; a frame inside a zstd segment
-- cannot be deleted, so a cancel would have nothing to act on; and a pending frame would pin its
-- segment against log_start for the whole wait. So the frame waits here, in an ordinary row, and
-- enters the log at the fire, in ONE transaction that pushes the frame and deletes this row.
--
-- The CREATE TABLE below is the staging table's contract, to the character (StagingTableContractIT
-- compares the catalog with it). A Queen version with its own timers creates the same table; whoever is
-- first makes it, and the other's IF NOT EXISTS moves on.
--
-- Keyed by names (tenant_id, queue, timer_key), with no queue id and no partition id:
--  * the destination queue may not exist at schedule time; it is provisioned at the fire, by the
--    same code path a push uses (precedent: queen.hotlist_repairs);
--  * decisive: no column names a partition, so this table adds no leg to
--    queen.log_partition_dead_v1. That function is LANGUAGE sql and resolves its tables when created:
--    a leg naming queen.log_timers fails on a database at V001 (MaintenanceCompileCheckIT) instead of
--    making maintenance quadratic;
--  * the schedule never writes queen.queues. Validating the queue at schedule time would put two
--    statements that write queen.queues with different row sets in one transaction wire, and two
--    such transactions wait on each other on the unique index.
--
-- visible_at = "not visible to the sweeper before this instant": deliver_at, or the lease expiry
-- when a lease reaches further. Generated and stored, so the claim is a range scan per shard with
-- zero rows filtered. PRICE: the claim's UPDATE writes an indexed column, so it is never HOT.
-- Bought deliberately: with an index on (shard, deliver_at) the claim would stay HOT, but every
-- poisoned timer serving its backoff would sit at the head of the index and be re-read by every
-- pass of every sweeper for the whole backoff; the cost would grow with the number of broken
-- timers, the one direction that must not degrade. Timer rates are control-plane rates.
--
-- Deliberately NOT created: an index on deliver_at (no reader: the sweeper orders by visible_at);
-- one on (tenant_id, queue) (the primary key's leading columns serve peek and list); one on
-- claim_token (the fire addresses rows by primary key).
--
-- The two lease columns: "in somebody's hands" is exactly
--     claim_token IS NOT NULL AND claimed_until > now().
-- A row backing off after a failed fire has claimed_until in the future and claim_token NULL: not
-- claimed, merely not due. One column would make it look claimed, and a claimed row cannot be
-- cancelled: a poisoned timer would be uncancellable for its whole backoff.
--
-- The fire never waits here. It verifies its claimed rows with FOR UPDATE SKIP LOCKED, provisions,
-- pre-locks partitions in ascending id and pushes, and deletes the rows it already holds as its
-- last step. A plain FOR UPDATE before that final delete would fail twice: a statement naming an id
-- column (which this table does not have) kills the boot, and without SKIP LOCKED the fire becomes a
-- waiter here, so one slow cancel in a long transaction wire could stop the fire of the whole broker
-- while it holds the lease of every other timer in its batch.
--
-- Delete, not "mark done": no status column, no history. The push and the disappearance of the row
-- are one commit, so the fire is exactly-once with nothing to reconcile after a crash, and the table
-- is bounded by pending work. PRICE: no tombstone, so a late cancel answers `absent`, which means
-- "no longer pending", never "not delivered". "Was it sent?" is answered by the log: look for the
-- timer's fixed txn in the destination queue.

CREATE TABLE IF NOT EXISTS queen.log_timers (
    tenant_id     UUID NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    queue         TEXT COLLATE "C" NOT NULL,
    timer_key     TEXT COLLATE "C" NOT NULL,
    "partition"   TEXT NOT NULL DEFAULT 'Default',
    deliver_at    TIMESTAMPTZ NOT NULL,
    txn           TEXT NOT NULL,
    message_id    UUID NOT NULL,
    payload       BYTEA NOT NULL,
    payload_zstd  BOOLEAN NOT NULL DEFAULT FALSE,
    encrypted     BOOLEAN NOT NULL DEFAULT FALSE,
    producer_sub  TEXT,
    attempts      INT NOT NULL DEFAULT 0,
    last_error    TEXT,
    claimed_until TIMESTAMPTZ,
    claim_token   UUID,
    shard         SMALLINT NOT NULL
                  GENERATED ALWAYS AS ((hashtextextended(timer_key, 0) & 63)::smallint) STORED,
    visible_at    TIMESTAMPTZ NOT NULL
                  GENERATED ALWAYS AS (
                      CASE WHEN claimed_until IS NULL OR claimed_until < deliver_at
                           THEN deliver_at ELSE claimed_until END) STORED,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, queue, timer_key)
);

CREATE INDEX IF NOT EXISTS idx_log_timers_visible
    ON queen.log_timers (shard, visible_at);

-- Beyond the contract: five columns of this project, added (not declared above) so that the contract
-- stays as written and a table a Queen version made first gets them too. Each is nullable without a
-- default or NOT NULL with a constant default: a catalog change, no rewrite, on a table Queen filled.
-- A (re)schedule rewrites all five (queen.bridge_apply_v4).
--
--  trace_context  the W3C trace context of the command that staged the timer: 16 bytes of trace id, 8 of
--                 span id, then ONE byte of flags and the tracestate as sent (ASCII, at most 512
--                 characters, normalized by the bridge: TraceParent). A 24-byte value has no flags byte and
--                 reads as sampled. NULL for a command without a (valid) traceparent. One column rather
--                 than several: the context is one fact (where the trace was when the timer was
--                 scheduled), read by position by queen.timer_trace_fields_v1 (docs/tracing.md#trace-context).
--                 PRICE: a traced timer's row is 25 bytes wider, plus its tracestate when it has one.
--  payload_bytes  the length of the payload as the frame will carry it: the bytes the bridge had before it
--                 compressed them (for a sealed payload, the sealed envelope's length). The claim bounds a
--                 cycle by what the sweeper's JVM will hold once it decompressed the payloads; PostgreSQL
--                 cannot decompress zstd, so the bridge writes it beside the row. NULL: the claim counts the
--                 stored bytes, and the sweeper bounds each fire's decompression by the zstd frame's
--                 declared size (docs/guarantees.md). PRICE: 4 bytes per row, not indexed.
--  deaths         how many leases of this row ran out in a sweeper's hands since it was last (re)scheduled.
--                 The sweeper fires a suspect (deaths > 0) in a group of 16, 4, then 1 by its deaths; a
--                 death there narrows the group and spends nothing.
--  held_alone     set by the sweeper (queen.timer_hold_alone_v1) on a suspect it is about to fire alone,
--                 with nothing else of the process in hand. A lease that runs out with held_alone set is a
--                 death this timer can be blamed for: the claim counts it as one attempt. So a timer that
--                 kills its process is dead-lettered after 3 deaths that narrow it down and
--                 sweeper.max.attempts deaths alone, while a timer that was merely in hand when its sweeper
--                 was paused, killed or cut from the database spends nothing
--                 (docs/guarantees.md#a-death-alone-is-an-attempt). PRICE, with deaths: 3 bytes per row;
--                 one more statement per suspect fired alone.
--  recurrence     a recurring timer's rule as the bridge read it ({"cron","zone"} or {"every"}, "startAt",
--                 optional "endAt" and "maxOccurrences", "catchUp", the series' "txn" and this
--                 occurrence's "seq"); NULL on a one-shot timer. A recurring row is the series' next
--                 occurrence: deliver_at its instant, txn `<series txn>@<instant>`; the fire that delivers
--                 it deletes it and stages the following occurrence under the same key in the same
--                 transaction (docs/recurring.md). PRICE: a null bit on one-shot rows, about 150 bytes on a
--                 recurring one.
ALTER TABLE queen.log_timers ADD COLUMN IF NOT EXISTS trace_context BYTEA;
ALTER TABLE queen.log_timers ADD CONSTRAINT log_timers_trace_context_w3c
    CHECK (trace_context IS NULL OR octet_length(trace_context) = 24 OR octet_length(trace_context) BETWEEN 25 AND 25 + 512);
ALTER TABLE queen.log_timers ADD COLUMN IF NOT EXISTS payload_bytes INT;
ALTER TABLE queen.log_timers
    ADD COLUMN IF NOT EXISTS deaths     SMALLINT NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS held_alone BOOLEAN  NOT NULL DEFAULT FALSE;
ALTER TABLE queen.log_timers ADD COLUMN IF NOT EXISTS recurrence JSONB;

-- Beyond the contract: two partial indexes.
--
-- idx_log_timers_tenant_visible (tenant_id, visible_at) WHERE claim_token IS NULL: fair for every tenant
-- (docs/decisions.md#claim-order-and-fairness). The claim's shard slices see only each shard's earliest
-- rows, so a tenant that flooded due timers would fill every slice and another tenant's due timers would
-- wait for the whole flood; with this index queen.timer_claim_v6 adds a slice of its own earliest due
-- timers for every tenant the shard slices under-serve, and finds the tenants with staged timers by a
-- skip scan over its leading column, one probe each. Partial, for two reasons: (1) the bridge's lookups by
-- key name tenant_id = ..., which a full (tenant_id, ...) index also matches; with statistics that say the
-- table is empty (vacuumed near-empty, then refilled faster than ANALYZE) the planner took it over the
-- primary key and read a whole tenant's rows per key (KeyLookupPlanIT). A partial index serves only a
-- query that names its predicate, which those lookups never do. (2) Rows in a sweeper's hands are not
-- claimable by the tenant slices anyway; a lease that ran out (token still set, visible again) is
-- claimed by the shard slices.
-- PRICE: one more btree entry per staged row (about 40 bytes with its tuple header) and one more index
-- insertion at every write of visible_at: the schedule, the reschedule, every claim and every failed
-- fire. None of those is HOT anyway (idx_log_timers_visible indexes visible_at), so this adds an index
-- write, not a heap rewrite.
--
-- idx_log_timers_recurring (tenant_id) WHERE recurrence IS NOT NULL: the recurring series per tenant, for
-- the dashboard's count of series and the bridge's tenant.max.recurring. One-shot rows never enter it.
-- PRICE: one entry per recurring row.
CREATE INDEX IF NOT EXISTS idx_log_timers_tenant_visible
    ON queen.log_timers (tenant_id, visible_at) WHERE claim_token IS NULL;
CREATE INDEX IF NOT EXISTS idx_log_timers_recurring ON queen.log_timers (tenant_id) WHERE recurrence IS NOT NULL;

-- Storage settings: each carries the date it was measured, the question or symptom, the number observed
-- and the decision (docs/schema-and-roles.md#schema says why these blocks keep their dates).
--
-- Rig and load, for every block below: the soak rig (module soak/, docs/soak.md), 2026-12-03
-- 04:12-04:57 UTC, `soak/run --seconds 240 --rate 300 --max-delay-seconds 150` over ten variants, each on
-- a fresh database after a CHECKPOINT. PostgreSQL 17.11, durable (fsync, synchronous_commit,
-- full_page_writes on), every server setting at PostgreSQL's default (autovacuum_naptime 1 min,
-- shared_buffers 128 MB); 1 bridge + 1 sweeper JVM from the launcher jar, a Kafka broker JVM. Load: 300
-- commands/s (81 % schedules, 9 % reschedules, 9 % cancels, 1 % poisoned), delays 1-150 s, ~21,000
-- timers pending in the second half, ~200 updates/s and ~235 fires/s on the table. A SHORTENED run (4
-- minutes per variant instead of 20) on a 2-core machine shared with four other engineers' builds:
-- load average 13-33 during the run, recorded in every sample. Latencies from this run are the
-- machine's, not the settings' (they follow the load average); sizes, tuple counts and vacuum counts
-- are the settings'. Report: soak/results/2026-12-03/ (summary.md, samples.csv, plots).
--
-- fillfactor = 100 (was 90 before it was measured). Measured 2026-12-03.
--   Question: does free space per page buy HOT updates on this table ("90 leaves room for the few that
--   are")?
--   Observed: 0 HOT updates of ~48,000 updates per variant, at fillfactor 70, 90 and 100 alike
--   (n_tup_hot_upd = 0 in every sample): the claim, the fail, the release and every reschedule write
--   visible_at, which is indexed, so no update here can be HOT. The free space only made the heap
--   bigger for the same ~21,000 live rows: 19.9 MB at 70, 14.6 MB at 90, 13.5 MB at 100 (end of run).
--   WAL per fired timer did not get worse without the free space: 3,212 B at 70, 3,338 B at 90,
--   3,045 B at 100 (within this machine's noise).
--   Decision: 100 (PostgreSQL's default for tables). A page's free space is refilled by inserts after
--   vacuum anyway; the reason given for 90 is measured absent.
--
-- autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000. Measured 2026-12-03.
--   Why set at all: every row of this table is inserted, updated at least once (claim) and deleted (fire
--   or cancel): it churns completely. Dead index entries at the head of (shard, visible_at) are what every
--   claim range scan walks first, so vacuum must come long before the default 20 % of the table is dead.
--   Question: does vacuum come before dead index entries pile up at the head of (shard, visible_at)?
--   Observed: dead tuples grow ~580/s under this load (each fire deletes a row whose claim already left
--   a dead version) and every variant got one autovacuum of the table per minute — 4 in 240 s at
--   0.02/1000 (baseline), 4 at PostgreSQL's 0.2/50 ("av-pgdefault"), 3 at 0.005/500 ("av-eager") —
--   each dropping n_dead_tup from ~29,000 (1.4x the live rows) to ~2,000. Mean dead tuples over the
--   steady half: 15,070 / 15,485 / 15,113. Any of the three thresholds (1,420 / 4,250 / 605 dead at
--   ~21,000 live) is crossed seconds after a vacuum; what sets the rhythm is autovacuum_naptime (1 min,
--   server-wide), not this table's numbers. Claim calls read 0.5-6.9 index entries per scan, with no
--   trend against dead tuples that this machine's noise lets one read (claim_vs_dead_tuples.png).
--   Decision: keep 0.02 / 1000. They cost nothing at this rate and are what starts vacuum early at low
--   rates (at 10 dead tuples/s the table is due after ~2.5 min instead of ~7 min at PostgreSQL's
--   defaults); that low-rate case was not run here. An operator who sees n_dead_tup of this table go
--   well past its live rows lowers autovacuum_naptime (server-wide), not these.
--   Open: idx_log_timers_visible grew about linearly to 2.4-2.9 MB in every variant, also after the
--   live set levelled off at ~21,000 rows; whether it levels off (B-tree pages emptied by one vacuum
--   are recycled by a later one) needs a run longer than 4 minutes. Not a reason to change these.
--
-- autovacuum_vacuum_insert_scale_factor = 0.05. Measured 2026-12-03.
--   Question: does the insert-driven vacuum keep the visibility map fresh for bursts of schedules?
--   Observed: not separable on this table. Every row is updated (claim) and deleted (fire or cancel)
--   within its delay, so every autovacuum of the run was already due by the dead-tuple threshold above;
--   the counts were the same with 0.05, 0.2 and 0.01.
--   Decision: keep 0.05; it only matters for a burst of schedules far in the future with nothing
--   firing, which the rig did not run.
--
-- vacuum_truncate = off: not a number. The table is bounded by pending work, so it grows and shrinks
--   with bursts; truncating the tail takes an ACCESS EXCLUSIVE lock that would stall every claim and every
--   schedule for its duration, to return pages the next burst wants back.
--
-- A table a Queen version with its own timers made first gets these settings too, until Queen's next boot
-- sets Queen's again; nothing else of it changes (docs/schema-and-roles.md#sharing-the-database-with-a-queen-broker).
ALTER TABLE queen.log_timers SET (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    vacuum_truncate = off,
    fillfactor = 100
);

COMMENT ON TABLE queen.log_timers IS
    'Timers waiting to become messages. Storage settings measured 2026-12-03 by the soak rig: '
    'fillfactor 100 (no update here can be HOT), autovacuum scale 0.02 / threshold 1000 / insert scale '
    '0.05; see the header of V002__log_timers.sql and soak/results/2026-12-03/.';
