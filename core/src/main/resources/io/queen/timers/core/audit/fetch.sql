-- The oldest outbox rows, in id order (the order they are published in), with the value the relay
-- publishes: {"eventId","type","at","tenant"} || event (V026). Reads only; takes no row locks: one
-- relay per database is active (advisory lock), and writers only ever insert.
SELECT id,
       tenant_id,
       kafka_key,
       (jsonb_build_object('eventId', event_id, 'type', type, 'at', created_at, 'tenant', tenant_id) || event)::text AS value,
       event_id
  FROM queen.timer_audit_outbox
 ORDER BY id
 LIMIT ?
