-- V006  queen.timer_settings: the bounds the schema owner sets on what a service login may ask of the stored
--       functions (docs/schema-and-roles.md#database-roles).
--
-- A function a service login may call never takes a bound from its caller: the login could pass any bound it
-- likes. The bounds live in this one row, which the service logins read through the functions only and never
-- write (db/least-privilege.sql grants no role anything on it). A call beyond them is refused (22023, naming
-- the setting: db/current/R__timer_bounds.sql), never clamped: a clamp would make the database and the
-- sweeper disagree silently about when a timer is exhausted. The sweeper reads them at start and refuses a
-- setting beyond them, naming both. They bind the logins that may not change them: the owner, a superuser
-- (the tests, a single-role development database) could move them anyway.
--
--   max_lease                the longest claim a sweeper may take (queen.timer_lease_v1): a claimed timer cannot
--                            be cancelled or rescheduled, so a login that could pass a lease of years could make
--                            a due timer uncancellable for years. Default 1 hour, the top of sweeper.lease.
--   min_cleanup_idle         how long a partition must have been idle before queen.log_cleanup_partitions_v1 may
--                            delete it (it refuses a p_cutoff later than now() - min_cleanup_idle): a cutoff in
--                            the future would delete every idle partition, with its consumer cursors, at once.
--                            Default 1 minute, the lower bound of cleanup.idle; raise it to the cleanup.idle you
--                            run (7 days by default) to make the database hold the line the setting draws.
--   max_transient_backoff    the longest transient backoff a caller may pass (default 10 minutes, the top of
--                            sweeper.transient.backoff): a transient failure spends no attempt, so a longer one
--                            would hide a claimed timer without spending anything.
--   max_backoff              the longest permanent backoff base and maximum (default 1 day, the top of
--                            sweeper.backoff.max).
--   min_attempts             the fewest failures after which a timer may be dead-lettered (default 5, the default
--                            of sweeper.max.attempts).
--   min_dead_letters_in_row  the fewest dead letters in a row that may end a recurring series (default 3, the
--                            default of recurring.max.consecutive.dead.letters).
--   relay_lease              how long the audit relay's lease runs (queen.timer_audit_relay_lease, V003; default
--                            20 s): a caller does not choose how long it may hold publication.
-- Change them as the owner: UPDATE queen.timer_settings SET max_lease = '5 minutes';
--
-- PRICE: least-privilege sweepers configured below min_attempts or min_dead_letters_in_row refuse to start
-- until the owner lowers the bound (the message says how). A sweeper login can still spend a claimed timer's
-- attempts with fake failures, one per call, min_attempts calls in all: failing what it claimed is its job. One
-- single-row read per claim, fail, dead-letter and cleanup call.
--
-- Re-runnable (IF NOT EXISTS, ON CONFLICT DO NOTHING), as the newest versioned migration must be for
-- MigrationsOutageIT, which applies it again after deleting its history row.

CREATE TABLE IF NOT EXISTS queen.timer_settings (
    one                     BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    max_lease               INTERVAL NOT NULL DEFAULT INTERVAL '1 hour' CHECK (max_lease > INTERVAL '0'),
    min_cleanup_idle        INTERVAL NOT NULL DEFAULT INTERVAL '1 minute' CHECK (min_cleanup_idle >= INTERVAL '0'),
    max_transient_backoff   INTERVAL NOT NULL DEFAULT INTERVAL '10 minutes' CHECK (max_transient_backoff > INTERVAL '0'),
    max_backoff             INTERVAL NOT NULL DEFAULT INTERVAL '1 day' CHECK (max_backoff > INTERVAL '0'),
    min_attempts            INT NOT NULL DEFAULT 5 CHECK (min_attempts >= 1),
    min_dead_letters_in_row INT NOT NULL DEFAULT 3 CHECK (min_dead_letters_in_row >= 1),
    relay_lease             INTERVAL NOT NULL DEFAULT INTERVAL '20 seconds'
                            CHECK (relay_lease >= INTERVAL '1 second' AND relay_lease <= INTERVAL '1 hour')
);
INSERT INTO queen.timer_settings (one) VALUES (TRUE) ON CONFLICT DO NOTHING;
