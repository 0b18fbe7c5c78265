-- V134  The audit outbox is emptied only by the relay holding the relay lock, and only of what it read
-- (issue 47, point 3).
--
-- queen.timer_audit_delete_v1(ids), granted to queen_bridge and queen_sweeper, deleted any outbox row by id: any
-- login of either role could erase any tenant's unpublished events (a `not_owner` verdict, a `dead_letter_removed`)
-- before the relay published them. Its successors (db/current/R__timer_audit_relay.sql):
--   queen.timer_audit_read_v1     the relay's read, refused unless the calling session holds the relay's advisory
--                                 lock; records in queen.timer_audit_reads (below) the ids it handed out, under a new
--                                 token it returns with them.
--   queen.timer_audit_delete_v2   deletes, for the session holding the relay lock, only the ids of the last read
--                                 whose token it presents.
-- queen.timer_audit_reads: one row (as queen.timer_settings), the last read's token and ids; written by the lock
-- holder only, readable by no service role (a token no other login can learn).
-- timer_audit_delete_v1 is dropped at once (as V130 dropped timer_dead_letter_v2): keeping it for the previous
-- release would keep the hole open.
--
-- PRICE: a relay of the previous release that holds the relay lock publishes its round and fails its delete (function
-- does not exist); it retries with a new producer and publishes the same events again (same eventId: consumers
-- deduplicate) until it is upgraded or an upgraded relay holds the lock. Upgrade the bridges and sweepers soon after
-- `migrate`. One row written per round that read something (a heap tuple with the ids: 8 bytes each, compressed when
-- long); two reads of pg_locks per round (R__timer_audit_relay.sql). Locks: CREATE TABLE takes none on existing
-- tables; the DROP an exclusive lock on that function only.

CREATE TABLE IF NOT EXISTS queen.timer_audit_reads (
    one     BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    token   UUID NOT NULL,
    ids     BIGINT[] NOT NULL,
    read_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

DROP FUNCTION IF EXISTS queen.timer_audit_delete_v1(BIGINT[]);
