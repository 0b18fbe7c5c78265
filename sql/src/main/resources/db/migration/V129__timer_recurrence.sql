-- V129  Recurring timers (issue 28; docs/recurring.md).
--
-- 1. queen.log_timers.recurrence: the rule of a recurring timer, beside the contracted columns, as the
--    bridge read it ({"cron","zone"} or {"every"}, "startAt", optional "endAt" and "maxOccurrences",
--    "catchUp", the series' "txn" and this occurrence's "seq"). NULL on a one-shot timer. Each row stays
--    one pending delivery: a recurring row is the series' next occurrence, deliver_at its instant and txn
--    `<series txn>@<instant>`; the fire that delivers it deletes it and inserts the following occurrence
--    under the same key in the same transaction (queen.timer_series_next_v1).
-- 2. idx_log_timers_recurring: the series per tenant, for the dashboard's count of recurring series.
--    Partial, so one-shot rows never enter it.
-- 3. queen.timer_audit_outbox.fired_recur: per `fired` element, aligned with `fired` like fired_subs, the
--    occurrence fields of a recurring timer ({"occurrence","seq","next","skipped"}); NULL when no timer
--    of the segment is recurring.
-- 4. The outbox accepts `skipped`: a missed occurrence that catchUp none did not deliver.
--
-- PRICE: ADD COLUMN of a nullable column without default rewrites nothing (catalog only, a brief ACCESS
-- EXCLUSIVE lock). One-shot rows pay one null bit; a recurring row about 150 bytes of rule and one entry
-- in the partial index. CREATE INDEX (not CONCURRENTLY: Flyway runs a migration in a transaction) holds a
-- SHARE lock on queen.log_timers for one scan of it: writes wait for that scan (about a second per
-- million staged rows). The CHECK is re-created under ACCESS EXCLUSIVE on the outbox and validated by
-- one scan of it (normally a few rows: the relay drains it).

ALTER TABLE queen.log_timers ADD COLUMN IF NOT EXISTS recurrence JSONB;

CREATE INDEX IF NOT EXISTS idx_log_timers_recurring ON queen.log_timers (tenant_id) WHERE recurrence IS NOT NULL;

ALTER TABLE queen.timer_audit_outbox ADD COLUMN IF NOT EXISTS fired_recur JSONB[];

ALTER TABLE queen.timer_audit_outbox DROP CONSTRAINT timer_audit_outbox_type_check;
ALTER TABLE queen.timer_audit_outbox ADD CONSTRAINT timer_audit_outbox_type_check
    CHECK (type IN ('scheduled', 'rescheduled', 'cancelled', 'absent', 'too_late',
                    'rejected', 'fired', 'retrying', 'dead_lettered', 'offset_moved', 'dead_letter_removed', 'skipped'));

-- 5. The fire's deliver and refuse steps take the recurring timers' plans (R__timer_fire.sql): the
--    versions without are internal to queen.timer_fire_v3, replaced in the same migration group, and
--    have no other caller.
DROP FUNCTION IF EXISTS queen.timer_fire_deliver_v2(queen.timer_fire_segment_v2[], queen.timer_fire_held_v2[],
                                                    queen.timer_fire_pushed_v2[]);
DROP FUNCTION IF EXISTS queen.timer_fire_refuse_v1(queen.timer_fire_held_v2[], queen.timer_fire_pushed_v2[]);
