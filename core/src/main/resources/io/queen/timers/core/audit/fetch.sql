-- The oldest outbox rows, in id order (the order they are published in), one result row per event.
-- A row of any type but `fired` is one event, published as {"eventId","type","at","tenant"} || event,
-- rendered here (`value`). A `fired` row (V026) is one segment: it is expanded with its elements in
-- frame order (seq 1..n), and the relay renders each of those events in Java (FiredEvents), so no
-- per-timer JSON is built in the database. A round holds whole rows only (it deletes only rows it
-- published completely): the oldest rows while their events add up to less than the batch size (the
-- third parameter), always at least one row; the second parameter (the same number) bounds the rows
-- read for that count. The first parameter lists the tenants whose audit topic is held (the relay cannot
-- write to it): their rows are left out, in place and in order, so the other tenants' rows flow. PRICE:
-- the primary-key scan reads past the held rows on every round while they wait (no tenant index: every
-- writer would pay for it).
-- Reads only; takes no row locks: one relay per database is active (advisory lock), and writers only
-- ever insert.
SELECT o.id,
       o.tenant_id,
       o.kafka_key,
       o.event_id,
       CASE WHEN o.fired IS NULL
            THEN (jsonb_build_object('eventId', o.event_id, 'type', o.type, 'at', o.created_at, 'tenant', o.tenant_id)
                  || o.event)::text
       END AS value,
       o.created_at,
       o.event->>'queue' AS queue,
       o.event->>'partition' AS "partition",
       (o.event->>'offset')::bigint AS base_offset,
       (o.event->>'segmentCreatedAt')::timestamptz AS segment_created_at,
       f.seq,
       f.event_id AS timer_event_id,
       f.timer_key,
       f.txn,
       f.message_id,
       f.deliver_at,
       f.attempts,
       f.producer_sub,
       f.trace_context
  FROM (SELECT w.*
          FROM (SELECT x.*, sum(coalesce(cardinality(x.fired), 1)) OVER (ORDER BY x.id) AS events_upto
                  FROM (SELECT * FROM queen.timer_audit_outbox WHERE tenant_id <> ALL(?) ORDER BY id LIMIT ?) x) w
         WHERE w.events_upto - coalesce(cardinality(w.fired), 1) < ?) o
  -- fired_subs (V056) and fired_traces (V090) are aligned with fired, or NULL: ROWS FROM pads them with NULLs
  LEFT JOIN LATERAL ROWS FROM (unnest(o.fired), unnest(o.fired_subs), unnest(o.fired_traces))
         WITH ORDINALITY AS f(event_id, timer_key, txn, message_id, deliver_at, attempts, producer_sub, trace_context, seq)
         ON true
 ORDER BY o.id, f.seq
