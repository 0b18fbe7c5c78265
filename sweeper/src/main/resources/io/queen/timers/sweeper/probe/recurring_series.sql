-- The recurring series with a pending occurrence, counted up to the cap, for the queen_timers_recurring_series
-- gauge. Through the function: the sweeper's role reads no table of timers. PRICE: in R__timer_probe.sql.
SELECT queen.timer_recurring_count_v1(?) AS counted
