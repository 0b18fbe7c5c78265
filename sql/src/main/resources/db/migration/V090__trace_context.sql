-- V090  Trace context across the delay (README "Trace context").
--
-- A command record with a W3C traceparent header (either form) keeps its trace until the timer ends:
-- the bridge stores the trace id and the command's span id in the staged row, the fire writes the
-- trace id into the frame (flag 1 of the log format, which nothing filled before), and every audit
-- event of the timer carries "traceId" and "spanId" (hex, as in traceparent): the bridge's verdicts
-- from the command itself, `fired`, `retrying` and `dead_lettered` from the row.
--
-- What it costs, and why this shape:
--   * queen.log_timers gets ONE nullable column, trace_context BYTEA: 16 bytes of trace id then 8 of
--     span id, NULL for a command without a (valid) traceparent. Nullable without a default, so ADD
--     COLUMN is a catalog change (no rewrite), and a timer without a trace stores nothing (a NULL is a
--     bit in the row's null bitmap). One column rather than two: the two ids are one fact (where the
--     trace was when the timer was scheduled) and always travel together. PRICE: the staged row is the
--     contracted table plus this column (StagingTableContractTest pins the contract's 19 columns as
--     they were and this one beside them); a traced timer's row is 25 bytes wider.
--   * Rescheduling replaces it with the new command's context (or clears it): the row is the last
--     command's timer, as it is for txn and payload.
--   * `fired` rows (one per segment, V026/V056) get a third parallel array, fired_traces BYTEA[],
--     aligned with fired[] like fired_subs and NULL when no timer of the segment has a trace -- so a
--     deployment without tracing writes nothing more than before. Same reasoning as V056's
--     fired_subs (a composite type used by a column cannot grow without a rewrite).
--   * New functions where the signature changes (bridge_apply_v3, timer_claim_v3: v2 stays for a
--     process of the previous build during a rolling restart); re-created with the same signature
--     where it does not (timer_fire_v1, timer_fail_v1, timer_dead_letter_v1, the view). Their bodies
--     are V050's, V055's and V056's with only the trace_context lines added; those files' headers keep
--     the reasoning and the lock order, which do not change: trace_context is read from rows already
--     held, and written by the upsert that already writes the row.
--
-- Since issue 26 this file defines no function or view (docs/decisions.md#one-live-definition-of-every-function):
-- queen.timer_trace_fields_v1, queen.timer_claim_v3, queen.timer_audit_events live, once and current, in
-- db/current/R__timer_audit_events.sql, db/current/R__timer_claim.sql.
-- queen.bridge_apply_v3, queen.timer_fire_v1, queen.timer_fail_v1, queen.timer_dead_letter_v1: retired,
-- dropped by V121.
-- The text above is the history of why they were made so.

ALTER TABLE queen.log_timers ADD COLUMN IF NOT EXISTS trace_context BYTEA;
ALTER TABLE queen.log_timers ADD CONSTRAINT log_timers_trace_context_24_bytes
    CHECK (trace_context IS NULL OR octet_length(trace_context) = 24);

ALTER TABLE queen.timer_audit_outbox ADD COLUMN IF NOT EXISTS fired_traces BYTEA[];
ALTER TABLE queen.timer_audit_outbox ADD CONSTRAINT timer_audit_outbox_fired_traces_aligned
    CHECK (fired_traces IS NULL OR cardinality(fired_traces) = cardinality(fired));
