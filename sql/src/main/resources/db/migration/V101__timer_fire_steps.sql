-- V101  The fire as named steps, taking its segments as rows with named fields (README "The sweeper";
-- docs/decisions.md#the-fires-order, docs/decisions.md#rows-not-parallel-arrays).
--
-- queen.timer_fire_v2(p_segments, p_blobs, p_hashes) is timer_fire_v1 (V033, last re-created by V090)
-- with the same semantics, read as the steps of docs/decisions.md#the-fires-order, each a function of
-- its own below with what it does, why, and which locks it takes:
--
--   0. timer_fire_segments_v2   read the call: the segments, where each one's blob and hashes start
--   1. timer_fire_hold_v2       lock/verify the claimed rows: FOR UPDATE SKIP LOCKED, claim token, live lease
--   2. timer_fire_live_v2       a segment is live only if every one of its rows is held
--   3. (the driver)             at most one live segment per destination, or SQLSTATE 22023
--   4. timer_fire_destinations_v2  provision + pre-lock the live segments' partitions (V032), ascending id
--   5. timer_fire_push_v2       log_append_v1 per live segment, in segment order
--   6. timer_fire_deliver_v2    delete the delivered rows and write their `fired` outbox rows, one statement
--   7. timer_fire_release_v2    hand the held rows of stale segments back (claimable in the next cycle)
--
-- The call (one jsonb of named rows, two binary streams):
--   p_segments  [{"tenant_id", "queue", "partition", "blob_length",
--                 "timers": [{"timer_key", "claim_token"}, ...] in frame order}], in push order;
--   p_blobs     the segments' blobs back to back (segment i's is the next blob_length bytes);
--   p_hashes    the frames' txn hashes back to back, 16 bytes per timer, in the same order.
-- Blobs and hashes stay binary: a segment's blob is the bulk of the call, and inside JSON it would be
-- base64 (a third larger) decoded again here. Every key must be present (queen.json_rows_v1, V100).
-- Result: one row per segment, in order: seg (1-based), verdict `fired` or `stale`, and for a fired
-- segment its partition id, first offset and created_at. Unchanged from v1.
--
-- What does not change (V033's header is the reasoning): one transaction (the caller runs it as one
-- autocommit statement), so the push and the disappearance of the staging rows are one commit --
-- exactly once, nothing deduplicated after the fact; rows are verified by their claim token with a
-- live lease (claimed_until > now()) and their segment's partition; all-or-nothing per segment; the
-- fired outbox row per segment with producer subs (V056) and trace contexts (V090) aligned with its
-- timers; the lock order, which is also the steps' order:
--     queen.log_timers rows in (tenant_id, queue, timer_key) ascending, SKIP LOCKED (step 1; no
--     timer-row lock is taken after it: steps 6 and 7 address rows already held, by TID)
--   → queen.queues → queen.log_partitions ascending id (step 4, one statement: two fires with
--     overlapping destinations cannot deadlock)
--   → leaves: queen.log_segments, queen.log_txns (step 5), queen.timer_audit_outbox (step 6).
--
-- State between the steps travels in three composite types (arrays of them in the driver), so each
-- step's inputs are named: timer_fire_segment_v2 (a segment of the call), timer_fire_held_v2 (a row
-- step 1 holds: segment, position, TID), timer_fire_pushed_v2 (a live segment's partition and, once
-- pushed, its first offset and created_at).
--
-- Planner settings: two, each on the one function whose statement needs it, with the reason there
-- (steps 4 and 6: joins of in-memory sets of thousands of rows that must be hash joins). v1 switched
-- them on and off around the statements; a function's SET clause scopes them to that function.
-- Measured 2026-12-03 (PostgreSQL 15, fsync off, load ~40; a fire of 4,500 claimed timers in 100
-- segments, rolled back, alternating): with them 468-587 ms per fire, without them 658-675 ms. The
-- same harness put v2 beside v1: 446-482 ms against 441-472 ms on a fresh table.
--
-- timer_fire_v1 is kept, not dropped: a sweeper of the previous release still running beside a new
-- one during a rolling restart keeps calling it (V055's convention).
--
-- Since issue 26 this file defines no function or view (docs/decisions.md#one-live-definition-of-every-function):
-- queen.timer_fire_segments_v2, queen.timer_fire_hold_v2, queen.timer_fire_live_v2, queen.timer_fire_destinations_v2, queen.timer_fire_map_destinations_v2, queen.timer_fire_push_v2, queen.timer_fire_deliver_v2, queen.timer_fire_release_v2, queen.timer_fire_v2 live, once and current, in db/current/R__timer_fire.sql.
-- The text above is the history of why they were made so.

CREATE TYPE queen.timer_fire_segment_v2 AS (
    seg         INT,     -- 1-based position in the call
    tenant_id   UUID,
    queue       TEXT,
    "partition" TEXT,
    frames      INT,     -- its timers, one frame each
    blob_from   BIGINT,  -- its blob: bytes blob_from + 1 .. blob_from + blob_length of p_blobs
    blob_length INT,
    hash_from   BIGINT   -- its hashes: 16 * frames bytes of p_hashes after the first 16 * hash_from
);

CREATE TYPE queen.timer_fire_held_v2 AS (
    seg      INT,        -- the row's segment
    pos      INT,        -- its frame's position in the segment, 0-based: offset = base_offset + pos
    row_ctid TID         -- stable while this transaction holds the row lock
);

CREATE TYPE queen.timer_fire_pushed_v2 AS (
    seg          INT,
    partition_id UUID,
    base_offset  BIGINT,      -- NULL until step 5 pushed it
    created_at   TIMESTAMPTZ
);
