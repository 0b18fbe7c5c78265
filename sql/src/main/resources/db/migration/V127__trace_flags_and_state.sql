-- V127  Trace flags and tracestate kept across the delay (issue 27 point 2, README "Trace context", "Tracing").
--
-- V090 stored 24 bytes per traced timer (trace id, span id) and dropped the rest of the W3C context: the
-- flags (a consumer was told to assume "sampled") and the producer's tracestate. A producer that did not
-- sample its trace had its fired message, its audit events and now its audit records' traceparent headers
-- claim it had; a vendor's tracestate entries stopped at our door.
--
-- trace_context keeps its meaning and grows at the end: 16 bytes of trace id, 8 of span id, then ONE byte of
-- flags, then the tracestate as sent (ASCII, at most 512 characters, normalized by the bridge: TraceParent).
-- A 24-byte value (written before this migration, or by a bridge of the previous build during a rolling
-- restart) still reads: its flags are unknown and read as sampled, as before. No new column: the context is one
-- fact and travels as one value through the claim, the fire (fired_traces) and the events, whose functions
-- read it by position (queen.timer_trace_fields_v1, R__timer_audit_events.sql, adds traceFlags/traceState).
--
-- PRICE: a traced timer's row is 1 byte wider, plus its tracestate when it has one (up to 512 bytes, in the
-- row and in its `fired` outbox row). The constraint is swapped NOT VALID, then validated: VALIDATE scans
-- queen.log_timers once under SHARE UPDATE EXCLUSIVE, which blocks neither the bridge's writes nor the claim;
-- ADD/DROP CONSTRAINT themselves take a brief ACCESS EXCLUSIVE lock (no scan under it).

ALTER TABLE queen.log_timers DROP CONSTRAINT IF EXISTS log_timers_trace_context_24_bytes;
ALTER TABLE queen.log_timers ADD CONSTRAINT log_timers_trace_context_w3c
    CHECK (trace_context IS NULL OR octet_length(trace_context) = 24 OR octet_length(trace_context) BETWEEN 25 AND 25 + 512)
    NOT VALID;
ALTER TABLE queen.log_timers VALIDATE CONSTRAINT log_timers_trace_context_w3c;
