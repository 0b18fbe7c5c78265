-- V056  producerSub in the audit events of a timer's life after the schedule: `fired`, `retrying`,
-- `dead_lettered` (README "Producer identity").
--
-- Why: with topic.<name>.auth=jwt the bridge stores a PROVEN producer_sub (a token's sub) on the timer,
-- the fire already carries it in the frame (flag 2), and the command verdicts already name it; an audit
-- consumer following a timer to its end must see who scheduled it without reading the log. Each event
-- gets "producerSub" when the timer has one, and no field when it has none (as every other optional
-- field of an event).
--
-- How, and what it costs:
--   * `fired` rows (one per segment, V026) get a parallel array, fired_subs TEXT[], aligned with
--     fired[] (element i is the sub of timer i), NULL when no timer of the segment has a sub -- so a
--     deployment without producer subs writes nothing more than before. A parallel column rather than a
--     new attribute of queen.timer_fired_v1: a composite type used by a table column cannot take a new
--     attribute without rewriting the column (and every reader of the type), while ADD COLUMN of a
--     nullable column is a catalog change. PRICE: two arrays that must stay aligned; the CHECK below
--     pins their lengths, and the only writer is timer_fire_v1 (one array_agg ORDER BY each).
--   * The view and the relay read both arrays with ROWS FROM (unnest(fired), unnest(fired_subs)) WITH
--     ORDINALITY: one pass over each, no subscripting (which walks a text[] from its start per row).
--   * timer_fire_v1, timer_fail_v1 and timer_dead_letter_v1 are re-created with the same signatures,
--     bodies copied from V033/V034/V035 with only the producer_sub lines added (their headers keep the
--     reasoning and the lock order, which do not change: producer_sub is read from rows already held).
--
-- Since issue 26 this file defines no function or view (docs/decisions.md#one-live-definition-of-every-function):
-- queen.timer_audit_events lives, once and current, in db/current/R__timer_audit_events.sql.
-- queen.timer_fire_v1, queen.timer_fail_v1, queen.timer_dead_letter_v1: retired, dropped by V121.
-- The text above is the history of why they were made so.

ALTER TABLE queen.timer_audit_outbox ADD COLUMN IF NOT EXISTS fired_subs TEXT[];
ALTER TABLE queen.timer_audit_outbox ADD CONSTRAINT timer_audit_outbox_fired_subs_aligned
    CHECK (fired_subs IS NULL OR cardinality(fired_subs) = cardinality(fired));
