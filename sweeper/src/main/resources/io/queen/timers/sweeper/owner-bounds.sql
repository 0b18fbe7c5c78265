-- The owner's bounds on the sweeper's arguments, as they hold for this login (db/current/R__timer_bounds.sql):
-- binds_caller, then each interval in seconds, then the two counts. Reads one row.
SELECT binds_caller,
       extract(epoch FROM max_lease)::float8 AS max_lease_seconds,
       extract(epoch FROM min_cleanup_idle)::float8 AS min_cleanup_idle_seconds,
       extract(epoch FROM max_transient_backoff)::float8 AS max_transient_backoff_seconds,
       extract(epoch FROM max_backoff)::float8 AS max_backoff_seconds,
       min_attempts, min_dead_letters_in_row
  FROM queen.timer_bounds_v1()
