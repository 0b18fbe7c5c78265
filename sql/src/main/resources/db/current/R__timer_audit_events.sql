-- How the audit outbox reads: queen.timer_audit_events, one row per event, and the trace fields every
-- event of a traced timer carries.
--
-- queen.timer_audit_outbox (V003) holds one row per outcome, written in the same transaction as the
-- change it reports, except `fired`: ONE row per fired segment, whose `fired` array holds one element
-- per timer in frame order (each with its own event_id), with fired_subs (producer subs) and
-- fired_traces (trace contexts) and fired_recur (a recurring timer's occurrence fields) aligned with
-- it, NULL when no timer of the segment has one. This view
-- expands `fired` rows into one event per timer, as the relay does in Java, for whoever reads the outbox
-- directly; the relay reads it too (core's audit fetch).
--
-- Guarantees: per-key order as stored (a timer's events come from transactions serialized by its row
-- lock, so later events have larger ids; a `fired` row's events come in frame order before the next
-- row's). The three arrays are read with ROWS FROM (unnest(...), ...) WITH ORDINALITY: one pass over
-- each, no subscripting (which walks a text[] from its start per row).
--
-- queen.timer_trace_fields_v1(trace_context): {"traceId", "spanId", "traceFlags"} in hex, as in W3C
-- traceparent, and "traceState" when there is one, from what the bridge stores (16 bytes of trace id, 8 of span
-- id, 1 of flags and the tracestate's ASCII); an empty object for NULL. A 24-byte value has no flags byte, so
-- no traceFlags (a reader takes it as sampled, TraceParent.of).
--
-- queen.timer_event_v1(timer): the event of a timer leaving a fire attempt (`retrying`, `dead_lettered`),
-- read from its staged row: one definition for both writers.
--
-- Locks: none (plain reads). PRICE: a reader of the outbox pays the expansion of `fired` rows; the
-- relay's backlog gauge counts rows, not events.

-- {"traceId": <32 hex>, "spanId": <16 hex>, "traceFlags": <2 hex>, "traceState": <text>} of a stored trace
-- context, '{}' for none: what every event of a traced timer adds. The relay's fetch turns the same fields into
-- the record's traceparent and tracestate headers (core's audit fetch.sql).
CREATE OR REPLACE FUNCTION queen.timer_trace_fields_v1(p_trace BYTEA)
RETURNS JSONB
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT CASE WHEN p_trace IS NULL THEN '{}'::jsonb
                ELSE jsonb_build_object('traceId', encode(substr(p_trace, 1, 16), 'hex'),
                                        'spanId', encode(substr(p_trace, 17, 8), 'hex'))
                     || CASE WHEN octet_length(p_trace) < 25 THEN '{}'::jsonb
                             ELSE jsonb_build_object('traceFlags', encode(substr(p_trace, 25, 1), 'hex')) END
                     || CASE WHEN octet_length(p_trace) < 26 THEN '{}'::jsonb
                             ELSE jsonb_build_object('traceState', convert_from(substr(p_trace, 26), 'UTF8')) END END
$$;

-- {"queue", "timerKey", "partition", "txn", "messageId", "deliverAt", "attempts", "error"}, then
-- "producerSub" and the trace fields when the timer has them: a `retrying` or `dead_lettered` event.
CREATE OR REPLACE FUNCTION queen.timer_event_v1(p_timer queen.log_timers)
RETURNS JSONB
LANGUAGE sql
STABLE
AS $$
    SELECT jsonb_build_object('queue', (p_timer).queue, 'timerKey', (p_timer).timer_key, 'partition', (p_timer)."partition",
                              'txn', (p_timer).txn, 'messageId', (p_timer).message_id, 'deliverAt', (p_timer).deliver_at,
                              'attempts', (p_timer).attempts, 'error', (p_timer).last_error)
             || CASE WHEN (p_timer).producer_sub IS NULL THEN '{}'::jsonb
                     ELSE jsonb_build_object('producerSub', (p_timer).producer_sub) END
             || queen.timer_trace_fields_v1((p_timer).trace_context)
$$;

-- The outbox one row per event, with producerSub, traceId and spanId on fired events.
CREATE OR REPLACE VIEW queen.timer_audit_events AS
SELECT o.id, 1::bigint AS seq, o.event_id, o.tenant_id, o.kafka_key, o.type, o.event, o.created_at
  FROM queen.timer_audit_outbox o
 WHERE o.fired IS NULL
UNION ALL
SELECT o.id, f.seq, f.event_id, o.tenant_id, (o.event->>'queue') || '/' || f.timer_key, o.type,
       jsonb_build_object(
           'queue', o.event->'queue',
           'timerKey', f.timer_key,
           'partition', o.event->'partition',
           'txn', f.txn,
           'messageId', f.message_id,
           'deliverAt', f.deliver_at,
           'offset', (o.event->>'offset')::bigint + f.seq - 1,
           'lateMs', floor(extract(epoch FROM ((o.event->>'segmentCreatedAt')::timestamptz - f.deliver_at)) * 1000)::bigint,
           'attempts', f.attempts)
         || CASE WHEN f.producer_sub IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('producerSub', f.producer_sub) END
         || queen.timer_trace_fields_v1(f.trace_context)
         || coalesce(f.recur, '{}'::jsonb),
       o.created_at
  FROM queen.timer_audit_outbox o
 CROSS JOIN LATERAL ROWS FROM (unnest(o.fired), unnest(o.fired_subs), unnest(o.fired_traces), unnest(o.fired_recur))
       WITH ORDINALITY AS f(event_id, timer_key, txn, message_id, deliver_at, attempts, producer_sub, trace_context, recur, seq)
 WHERE o.fired IS NOT NULL;
