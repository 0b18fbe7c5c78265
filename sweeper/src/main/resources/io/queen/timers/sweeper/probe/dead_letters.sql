-- The timers waiting in queen.log_dlq (the sweeper's rows, consumer_group '__timer__'; a Queen broker's
-- consumers keep theirs in the same table), counted up to the cap, for the queen_timers_dead_letters gauge.
-- PRICE: log_dlq has no index on consumer_group, so this scans the table, stopping at the cap; it runs
-- every few seconds on a thread of its own, never on the fire path. Reads only, takes no row lock.
SELECT count(*) AS counted FROM (SELECT 1 FROM queen.log_dlq WHERE consumer_group = '__timer__' LIMIT ?) d
