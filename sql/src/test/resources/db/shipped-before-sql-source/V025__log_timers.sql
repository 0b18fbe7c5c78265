-- V025  queen.log_timers: where a timer waits before it is a message (seed: timer-internals.txt).
--
-- A timer is a message that is not in the log yet. It cannot live in the log: the pop is a
-- contiguous offset scan that a future frame would block or skip; a frame inside a zstd segment
-- cannot be deleted, so a cancel would have nothing to act on; and a pending frame would pin its
-- segment against log_start for the whole wait. So the frame waits here, in an ordinary row, and
-- enters the log at the fire, in ONE transaction that pushes the frame and deletes this row.
--
-- Keyed by names (tenant_id, queue, timer_key), with no queue id and no partition id:
--  * the destination queue may not exist at schedule time; it is provisioned at the fire, by the
--    same code path a push uses (precedent: queen.hotlist_repairs);
--  * decisive: no column names a partition, so this table adds no leg to
--    queen.log_partition_dead_v1 (V006). That function is LANGUAGE sql and resolves its tables
--    when created, before this file runs: a leg naming queen.log_timers kills the boot instead of
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
-- last step. A design note once prescribed a plain FOR UPDATE before that final delete. It is
-- CANCELLED, and it fails in both of two ways: (1) it names an id column this table does not have,
-- so the boot dies; (2) without SKIP LOCKED the fire becomes a waiter here, so one slow cancel in a
-- long transaction wire could stop the fire of the whole broker while it holds the lease of every
-- other timer in its batch.
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

-- Storage settings. None of these numbers is measured yet. Each is to be replaced, after the first
-- soak on a test rig (never from a live stack), by a dated block in the style of Queen's 001:
-- date, the symptom or question, the number observed, the rig.
--
-- fillfactor = 90 — NOT MEASURED. Almost no update here is HOT (the claim, the fail and every
--   reschedule write visible_at, which is indexed), so free space per page buys little; 90 leaves
--   room for the few that are (a fail that only changes last_error never happens alone).
-- autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000 — NOT MEASURED. Every
--   row of this table is inserted, updated at least once (claim) and deleted (fire or cancel): it
--   churns completely. Dead index entries at the head of (shard, visible_at) are what every claim
--   range scan walks first, so vacuum must come long before the default 20 % of the table is dead.
-- autovacuum_vacuum_insert_scale_factor = 0.05 — NOT MEASURED. Keeps the visibility map fresh for
--   bursts of schedules that no update has touched yet.
-- vacuum_truncate = off — not a number. The table is bounded by pending work, so it grows and
--   shrinks with bursts; truncating the tail takes an ACCESS EXCLUSIVE lock that would stall every
--   claim and every schedule for its duration, to return pages the next burst wants back.
ALTER TABLE queen.log_timers SET (
    fillfactor = 90,
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    vacuum_truncate = off
);
