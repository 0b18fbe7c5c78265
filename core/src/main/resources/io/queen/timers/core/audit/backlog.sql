-- Outbox backlog, an upper bound read from both ends of the primary key in O(1) (ids of rolled-back
-- inserts leave gaps, so the true count can be smaller). count(*) would scan the table on every round.
SELECT coalesce(max(id) - min(id) + 1, 0) FROM queen.timer_audit_outbox
