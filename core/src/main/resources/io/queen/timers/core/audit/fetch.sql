-- The oldest outbox rows, in id order (the order they are published in), one result row per event,
-- each as the Kafka key and value the relay publishes (the relay renders nothing). The event is read
-- from the view queen.timer_audit_events, the one owner of the per-timer `fired` events a segment row
-- holds (docs/decisions.md#who-renders-the-audit-event), and published as
-- {"eventId","type","at","tenant"} || event (`value`, rendered only here). A round holds whole rows
-- only (it deletes only rows it published completely): the oldest rows while their events add up to
-- less than the batch size (the third parameter), always at least one row; the second parameter (the
-- same number) bounds the rows read for that count. The first parameter lists the tenants whose audit
-- topic is held (the relay cannot write to it): their rows are left out, in place and in order, so the
-- other tenants' rows flow. PRICE: the primary-key scan reads past the held rows on every round while
-- they wait (no tenant index: every writer would pay for it). The chosen ids reach the view as one
-- array (`= ANY`), a condition PostgreSQL pushes into both branches of the view's UNION ALL, so each
-- branch reads those rows by primary key.
-- Reads only; takes no row locks: one relay per database is active (advisory lock), and writers only
-- ever insert.
SELECT e.id,
       e.tenant_id,
       e.kafka_key,
       e.event_id,
       -- the record's W3C headers (docs/tracing.md#tracing): the trace of the command behind the event, flags as sent
       -- (an event of before V127 has none: sampled, as consumers were told to assume), and its tracestate
       CASE WHEN e.event->>'traceId' IS NOT NULL AND e.event->>'spanId' IS NOT NULL -- (no '?' operator: JDBC reads it as a parameter)
            THEN '00-' || (e.event->>'traceId') || '-' || (e.event->>'spanId') || '-' || coalesce(e.event->>'traceFlags', '01')
       END AS traceparent,
       e.event->>'traceState' AS tracestate,
       (jsonb_build_object('eventId', e.event_id, 'type', e.type, 'at', e.created_at, 'tenant', e.tenant_id)
        || e.event)::text AS value
  FROM queen.timer_audit_events e
 WHERE e.id = ANY (ARRAY(
        SELECT w.id
          FROM (SELECT x.id, x.fired, sum(coalesce(cardinality(x.fired), 1)) OVER (ORDER BY x.id) AS events_upto
                  FROM (SELECT id, fired FROM queen.timer_audit_outbox WHERE tenant_id <> ALL(?) ORDER BY id LIMIT ?) x) w
         WHERE w.events_upto - coalesce(cardinality(w.fired), 1) < ?))
 ORDER BY e.id, e.seq
