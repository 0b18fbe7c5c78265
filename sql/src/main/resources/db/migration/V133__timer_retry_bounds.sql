-- V133  A sweeper's login no longer chooses its own retry bounds (issue 47, point 3).
--
-- queen.timer_fail_v2 took the caller's backoffs and max attempts, and queen.timer_dead_letter_v3 the caller's
-- max attempts and a recurring series' dead-letters-in-row bound: a login of queen_sweeper could hide any due timer
-- it claimed for a century without spending an attempt (a transient backoff of '100 years'), dead-letter it after
-- one fake failure (p_max_attempts 1, then the dead letter), or end a recurring series at its first dead letter.
-- The owner's bounds, in the one row of queen.timer_settings (V130), which no service role may write:
--   max_transient_backoff    the longest transient backoff a caller may pass (default 10 minutes, the top of
--                            sweeper.transient.backoff): a transient failure spends no attempt.
--   max_backoff              the longest permanent backoff base and maximum (default 1 day, the top of
--                            sweeper.backoff.max).
--   min_attempts             the fewest failures after which a timer may be dead-lettered (default 5, the default of
--                            sweeper.max.attempts).
--   min_dead_letters_in_row  the fewest dead letters in a row that may end a recurring series (default 3, the default
--                            of recurring.max.consecutive.dead.letters).
-- A call beyond them is refused (22023, naming the setting: db/current/R__timer_bounds.sql), never clamped: a clamp
-- would make the database and the sweeper disagree silently about when a timer is exhausted. The sweeper reads them at
-- start and refuses a setting beyond them, naming both. They bind the logins that may not change them (no UPDATE on
-- queen.timer_settings): the owner, a superuser (the tests, a single-role development database) could move them anyway.
-- Change them as the owner: UPDATE queen.timer_settings SET min_attempts = 3;
--
-- PRICE: an install whose least-privilege sweepers run sweeper.max.attempts below 5 or
-- recurring.max.consecutive.dead.letters below 3 refuses to start them after this upgrade until the owner lowers the
-- bound (the message says how). A sweeper login can still spend a claimed timer's attempts with fake failures, one per
-- call, min_attempts calls in all: failing what it claimed is its job. One single-row read per fail and per
-- dead-letter call. Locks: ADD COLUMN with a constant default rewrites nothing, but holds an exclusive lock on the
-- one-row table until this migration commits: every claim (which reads max_lease) waits that long (milliseconds).

ALTER TABLE queen.timer_settings
    ADD COLUMN IF NOT EXISTS max_transient_backoff INTERVAL NOT NULL DEFAULT INTERVAL '10 minutes'
        CHECK (max_transient_backoff > INTERVAL '0'),
    ADD COLUMN IF NOT EXISTS max_backoff INTERVAL NOT NULL DEFAULT INTERVAL '1 day'
        CHECK (max_backoff > INTERVAL '0'),
    ADD COLUMN IF NOT EXISTS min_attempts INT NOT NULL DEFAULT 5
        CHECK (min_attempts >= 1),
    ADD COLUMN IF NOT EXISTS min_dead_letters_in_row INT NOT NULL DEFAULT 3
        CHECK (min_dead_letters_in_row >= 1);
