-- Recurring timers (docs/recurring.md): what every path that ends an occurrence does to its series.
-- (Named "cadence" so Flyway, which runs repeatable files by name, creates it before R__timer_fire.sql,
-- whose LANGUAGE sql deliver step names timer_series_next_v1 and is checked at creation.)
--
-- queen.timer_uuidv7_v1(at): a UUIDv7 (RFC 9562 §5.7) whose 48-bit Unix milliseconds are `at`'s (floored, so
-- the id's time is never after `at`), version 7, variant 10, and the other 74 bits gen_random_uuid()'s
-- random ones (no randomness of our own). Why here: every message id in the log is a UUIDv7 minted when
-- its message is staged (docs/formats.md, docs/recurring.md); the bridge mints the first occurrence's in
-- Java (io.queen.timers.log.codec.UuidV7), a successor is staged by SQL, and PostgreSQL before 18 has no
-- uuidv7(). Unlike the Java one it keeps no sequence: ids minted in one millisecond (successors staged by
-- one fire) sort by their random bits, not in mint order: RFC 9562 allows it, and nothing orders by them.
-- Internal: called by timer_series_next_v1 only, granted to no role (db/least-privilege.sql).
-- PRICE: one gen_random_uuid() and a few byte operations per successor staged (microseconds).
CREATE OR REPLACE FUNCTION queen.timer_uuidv7_v1(p_at TIMESTAMPTZ)
RETURNS UUID
LANGUAGE sql
VOLATILE STRICT PARALLEL SAFE
AS $$
    SELECT encode(set_byte(set_byte(r.b, 6, (get_byte(r.b, 6) & 15) | 112),  -- version 7 (0111) above rand_a
                           8, (get_byte(r.b, 8) & 63) | 128), 'hex')::uuid   -- variant 10
      FROM (SELECT overlay(uuid_send(gen_random_uuid())
                           PLACING substring(int8send(floor(extract(epoch FROM p_at) * 1000)::bigint) FROM 3)
                           FROM 1 FOR 6) AS b) r
$$;

-- queen.timer_series_next_v1(timer, plan): called once per recurring row by the statement that deletes
-- it (the fire's deliver and refuse steps, the dead letter, the skip), after its delete. It stages the
-- next occurrence the sweeper planned as a NEW row under the same key (deliver_at the instant, txn
-- `<series txn>@<instant>`, a new message_id: a UUIDv7 of this transaction's now(), the moment it is
-- staged; attempts 0, recurrence with seq + 1 when this occurrence was delivered or dead-lettered,
-- unchanged when it was skipped), and returns the fields the outcome's
-- audit event adds: {"occurrence", "seq", "next", "skipped": {"from", "to"}}. Nothing is staged when the
-- plan's next is null: the series ended, and the event says so (next null) and why ("ended": the plan's "end",
-- which the sweeper's rule sets: max_occurrences, end_at, no_occurrence or rule_unreadable).
--
-- Bounds that end a series, decided here, in the transaction that ends the occurrence:
--  * "stopped" in the rule: a cancel met this occurrence in a sweeper's hands (too_late, bridge_apply_v4 adds
--    {"stopped": "cancelled"}). Whatever the plan says, nothing follows, and the event says "ended": "cancelled";
--    read from the row, not the plan, so a claim made after the cancel (a lease lost, a retry) ends it too.
--  * "end" in the plan ends the series whatever its rule says: the fire's refusal for encryption adds
--    {"end": "encryption_required"} (R__timer_fire.sql): every later occurrence would be refused too, each
--    writing a cleartext queen.log_dlq row.
--  * A dead letter's plan carries {"deadLetter": true, "maxDeadLettersInRow": N} (the sweeper's
--    recurring.max.consecutive.dead.letters). The run of dead letters in a row is kept in the rule as
--    "deadLettersInRow" (absent when 0): a dead letter adds one, a delivered occurrence resets it, a skipped
--    one leaves it. When a dead letter brings it to N, the series ends: "dead_letters". A plan without the
--    key bounds nothing (a dead letter's own call refuses one for a login the owner's bounds bind).
--  The event then says why: "ended" (and "deadLettersInRow" on every dead letter of a series), next null.
--  PRICE: a few jsonb reads per recurring row; a series that fails carries one key more in its rule.
--
-- The plan is the sweeper's (io.queen.timers.core.recur.Recurrence#plan): {"deliver", "next",
-- "skippedFrom", "skippedTo"}, instants as ISO-8601 text. The next instant is used as the sweeper wrote
-- it for the txn (Java's Instant#toString, the form the docs promise) and as timestamptz for deliver_at.
--
-- Guarantees: the insert runs in the caller's transaction, after the caller's delete of the same key in
-- the same statement (a data-modifying CTE deletes a row before returning it; the unique check sees a row
-- deleted by its own transaction as gone), so the series is one row at every commit: the occurrence is
-- delivered and its successor staged, or neither. A next instant already past is staged like a
-- back-dated timer (claimed_until = now(), no token: visible_at = now(), R__bridge_apply.sql).
-- Lock order: the new row only (the key is the caller's, held; no other row is touched).
-- PRICE: one heap tuple and its index entries (primary key, visible, tenant, recurring) per occurrence
-- that has a successor: recurring rows only.
CREATE OR REPLACE FUNCTION queen.timer_series_next_v1(p_timer queen.log_timers, p_plan JSONB)
RETURNS JSONB
LANGUAGE plpgsql
VOLATILE
AS $$
DECLARE
    v_seq  INT := coalesce(((p_timer).recurrence ->> 'seq')::int, 1);
    v_next TIMESTAMPTZ := (p_plan ->> 'next')::timestamptz;
    v_dead_letter BOOLEAN := coalesce((p_plan ->> 'deadLetter')::boolean, false);
    v_dead INT := coalesce(((p_timer).recurrence ->> 'deadLettersInRow')::int, 0);
    -- a cancel that met the occurrence in a sweeper's hands (too_late) marked the rule: the series ends here
    v_end  TEXT := coalesce((p_timer).recurrence ->> 'stopped', p_plan ->> 'end');
BEGIN
    IF (p_timer).recurrence IS NULL OR p_plan IS NULL THEN
        RAISE EXCEPTION 'timer_series_next_v1: % is not a recurring timer with a plan', (p_timer).timer_key USING ERRCODE = '22023';
    END IF;
    IF v_dead_letter THEN
        v_dead := v_dead + 1;
        IF v_end IS NULL AND v_dead >= (p_plan ->> 'maxDeadLettersInRow')::int THEN
            v_end := 'dead_letters';
        END IF;
    ELSIF (p_plan ->> 'deliver')::boolean IS NOT FALSE THEN
        v_dead := 0;   -- delivered: the run is broken
    END IF;
    IF v_end IS NOT NULL THEN
        v_next := NULL;
    END IF;
    IF v_next IS NOT NULL THEN
        IF v_next <= (p_timer).deliver_at THEN  -- a series only moves forward: never the same occurrence twice
            RAISE EXCEPTION 'timer_series_next_v1: next % is not after %', v_next, (p_timer).deliver_at USING ERRCODE = '22023';
        END IF;
        INSERT INTO queen.log_timers (tenant_id, queue, timer_key, "partition", deliver_at, txn, message_id, payload,
                                      payload_zstd, payload_bytes, encrypted, producer_sub, trace_context, claimed_until,
                                      recurrence)
        VALUES ((p_timer).tenant_id, (p_timer).queue, (p_timer).timer_key, (p_timer)."partition", v_next,
                ((p_timer).recurrence ->> 'txn') || '@' || (p_plan ->> 'next'), queen.timer_uuidv7_v1(now()), (p_timer).payload,
                (p_timer).payload_zstd, (p_timer).payload_bytes, (p_timer).encrypted, (p_timer).producer_sub,
                (p_timer).trace_context, CASE WHEN v_next < now() THEN now() END,
                jsonb_set((p_timer).recurrence - 'deadLettersInRow', '{seq}',
                          to_jsonb(v_seq + CASE WHEN (p_plan ->> 'deliver')::boolean IS FALSE THEN 0 ELSE 1 END))
                || CASE WHEN v_dead > 0 THEN jsonb_build_object('deadLettersInRow', v_dead) ELSE '{}'::jsonb END);
    END IF;
    RETURN jsonb_build_object('occurrence', (p_timer).deliver_at, 'seq', v_seq, 'next', to_jsonb(v_next))
        || CASE WHEN v_end IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('ended', v_end) END
        || CASE WHEN v_dead_letter THEN jsonb_build_object('deadLettersInRow', v_dead) ELSE '{}'::jsonb END
        || CASE WHEN p_plan ->> 'skippedFrom' IS NULL THEN '{}'::jsonb
                ELSE jsonb_build_object('skipped', jsonb_build_object('from', (p_plan ->> 'skippedFrom')::timestamptz,
                                                                       'to', (p_plan ->> 'skippedTo')::timestamptz)) END;
END;
$$;

-- queen.timer_skip_v1(p_timers): catchUp none's missed occurrences, which the sweeper claimed and does
-- not deliver. Rows [{"tenant_id", "queue", "timer_key", "claim_token", "plan"}]; each row still carrying
-- the caller's token with a live lease is deleted, its successor staged (timer_series_next_v1) and a
-- `skipped` event written, in one statement. A row lost to somebody else (token or lease gone) is left
-- alone: whoever holds it now decides. Returns the keys skipped.
-- Lock order: queen.log_timers rows, (tenant_id, queue, timer_key) ascending, SKIP LOCKED (never waits),
-- then the outbox (leaf).
CREATE OR REPLACE FUNCTION queen.timer_skip_v1(p_timers JSONB)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT)
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
VOLATILE
AS $$
    WITH held AS (
        SELECT l.row_ctid, x.plan
          FROM (SELECT r.* FROM jsonb_to_recordset(queen.json_rows_v1('timer_skip_v1 timers', p_timers,
                                                   '{tenant_id,queue,timer_key,claim_token,plan}'))
                               AS r(tenant_id UUID, queue TEXT, timer_key TEXT, claim_token UUID, plan JSONB)
                 ORDER BY r.tenant_id, r.queue COLLATE "C", r.timer_key COLLATE "C") x
         CROSS JOIN LATERAL (
                SELECT t.ctid AS row_ctid
                  FROM queen.log_timers t
                 WHERE t.tenant_id = x.tenant_id AND t.queue = x.queue COLLATE "C" AND t.timer_key = x.timer_key COLLATE "C"
                   AND t.claim_token = x.claim_token AND t.claimed_until > now() AND t.recurrence IS NOT NULL
                   FOR UPDATE OF t SKIP LOCKED) l),
    gone AS (
        DELETE FROM queen.log_timers t
         WHERE t.ctid = ANY (ARRAY(SELECT h.row_ctid FROM held h))
        RETURNING t.ctid AS row_ctid, t AS timer),
    events AS (
        INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
        SELECT (g.timer).tenant_id, (g.timer).queue || '/' || (g.timer).timer_key, 'skipped',
               -- the timer's fields without attempts and error: nothing was attempted
               (queen.timer_event_v1(g.timer) - 'attempts' - 'error') || queen.timer_series_next_v1(g.timer, h.plan)
          FROM gone g JOIN held h ON h.row_ctid = g.row_ctid
         ORDER BY (g.timer).tenant_id, (g.timer).queue, (g.timer).timer_key
        RETURNING 1)
    SELECT (g.timer).tenant_id, (g.timer).queue, (g.timer).timer_key FROM gone g
$$;
