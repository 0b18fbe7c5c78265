-- The oldest outbox rows, in id order (the order they are published in), with the number of events each
-- holds (a fired row is a segment: one event per timer). The relay picks whole rows from them while their
-- events add up to less than audit.relay.batch.size, skipping the rows of the round still awaiting its acks
-- (by id: the relay's pipeline, README "The audit outbox"), then reads those rows' events with render.sql.
-- The first parameter lists the tenants whose audit topic is held (the relay cannot write to it): their
-- rows are left out, in place and in order, so the other tenants' rows flow. The second bounds the rows
-- read: the batch size plus the rows in flight (every row holds at least one event).
-- PRICE: the primary-key scan reads past the held rows and the rows in flight on every round (no tenant
-- index: every writer would pay for it).
-- Reads only; takes no row locks: one relay per database is active (advisory lock), and writers only
-- ever insert.
SELECT id, coalesce(cardinality(fired), 1) AS events
  FROM queen.timer_audit_outbox
 WHERE tenant_id <> ALL(?)
 ORDER BY id
 LIMIT ?
