-- The oldest outbox rows of the tenants whose topic is not held (first parameter), one result row per event, each as
-- the Kafka key and value the relay publishes, with the token of this read (db/current/R__timer_audit_relay.sql:
-- refused unless this session holds the relay lock; it records the ids it hands out). Whole rows while their events
-- add up to less than the third parameter, at most the second parameter of rows read for that count.
SELECT id, tenant_id, kafka_key, event_id, traceparent, tracestate, value, read_token
  FROM queen.timer_audit_read_v1(?, ?, ?)
