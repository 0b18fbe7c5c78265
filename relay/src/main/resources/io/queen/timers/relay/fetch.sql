-- The oldest outbox rows of the tenants whose topic is not held (second parameter), one result row per event as raw
-- columns (AuditEventValue renders the Kafka value), with the token of this read (db/current/R__timer_audit_relay.sql:
-- refused unless the first parameter is the live relay lease's token; it records the ids it hands out). Whole rows
-- while their events add up to less than the fourth parameter, at most the third parameter of rows read for that count.
SELECT id, seq, tenant_id, type, created_at, event_id, kafka_key, body, trace_id, span_id, trace_flags, trace_state,
       queue, "partition", first_offset, segment_created_at, timer_key, txn, message_id, deliver_at, attempts,
       producer_sub, trace_context, recur, read_token
  FROM queen.timer_audit_read_v3(?, ?, ?, ?)
