-- The events of the outbox rows the relay picked (pick.sql), one result row per event, in id order and,
-- within a fired segment's row, in frame order, each as the Kafka key and value the relay publishes (the
-- relay renders nothing). The event is read from the view queen.timer_audit_events, the one owner of the
-- per-timer `fired` events a segment row holds (docs/decisions.md#who-renders-the-audit-event), and
-- published as {"eventId","type","at","tenant"} || event (`value`, rendered only here). The ids reach the
-- view as one array (`= ANY`), a condition PostgreSQL pushes into both branches of the view's UNION ALL,
-- so each branch reads those rows by primary key.
-- Reads only; takes no row locks.
SELECT e.id,
       e.tenant_id,
       e.kafka_key,
       e.event_id,
       (jsonb_build_object('eventId', e.event_id, 'type', e.type, 'at', e.created_at, 'tenant', e.tenant_id)
        || e.event)::text AS value
  FROM queen.timer_audit_events e
 WHERE e.id = ANY(?)
 ORDER BY e.id, e.seq
