-- V130  Stored functions enforce their own contract (issue 37, point 5).
--
-- 1. queen.timer_settings: the bounds the schema owner sets, which the service logins can read through the
--    functions only and never write (db/least-privilege.sql grants no role anything on it). One row.
--      max_lease         the longest claim a sweeper may take (queen.timer_claim_v5 refuses a longer p_lease):
--                        a claimed timer cannot be cancelled or rescheduled, so a login that could pass a lease
--                        of years could make a due timer uncancellable for years. Default 1 hour, the upper
--                        bound of sweeper.lease, so no valid sweeper configuration is refused.
--      min_cleanup_idle  how long a partition must have been idle before queen.log_cleanup_partitions_v1 may
--                        delete it (it refuses a p_cutoff later than now() - min_cleanup_idle): a cutoff in the
--                        future would delete every idle partition, with its consumer cursors, at once.
--                        Default 1 minute, the lower bound of cleanup.idle; raise it to the cleanup.idle you
--                        run (7 days by default) to make the database hold the line the setting draws.
--    Change them as the owner: UPDATE queen.timer_settings SET max_lease = '5 minutes';
-- 2. queen.timer_dead_letter_v2 is dropped: it moved any unclaimed timer with attempts >= the CALLER's
--    p_max_attempts (0: every pending timer) and stored the caller's payload instead of the row's. Its
--    successor queen.timer_dead_letter_v3 (db/current/R__timer_dead_letter.sql) moves only rows that carry the
--    caller's live claim token, and keeps the row's own payload. Not kept for the previous release (the rule
--    of docs/decisions.md#a-superseded-function-is-dropped-one-release-after-nothing-calls-it gives way, as
--    V123 did for bridge_offset_set_v1): keeping it would leave the way around the check open.
--
-- PRICE: a sweeper of the previous release fails its dead-letter step (function does not exist) until it is
-- upgraded; its exhausted timers stay staged, unclaimed, and the first upgraded sweeper to claim them
-- dead-letters them. One single-row read per claim and per cleanup call. Locks: CREATE TABLE takes none on
-- existing tables; the DROP an exclusive lock on that function only.

CREATE TABLE IF NOT EXISTS queen.timer_settings (
    one              BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    max_lease        INTERVAL NOT NULL DEFAULT INTERVAL '1 hour' CHECK (max_lease > INTERVAL '0'),
    min_cleanup_idle INTERVAL NOT NULL DEFAULT INTERVAL '1 minute' CHECK (min_cleanup_idle >= INTERVAL '0')
);
INSERT INTO queen.timer_settings (one) VALUES (TRUE) ON CONFLICT DO NOTHING;

DROP FUNCTION IF EXISTS queen.timer_dead_letter_v2(JSONB, INT);
