-- V102  The sweeper's other functions that take timers as parallel arrays take rows with named
-- fields (docs/decisions.md#rows-not-parallel-arrays; V100 says why jsonb and what it costs).
--
-- timer_fail_v1 and timer_release_v1 (V034, V090) and timer_dead_letter_v1 (V035, V090) name their
-- timers by four arrays that line up index for index (tenants[i], queues[i], keys[i], tokens[i] or
-- payloads[i]). Their v2 take one jsonb array of rows instead, every key present in every row
-- (queen.json_rows_v1, V100: a missing or misspelt key is SQLSTATE 22023):
--
--   timer_fail_v2(p_timers, ...)    [{"tenant_id", "queue", "timer_key", "claim_token"}], then v1's
--                                   error, transient flag, backoffs and max attempts, unchanged
--   timer_release_v2(p_timers)      [{"tenant_id", "queue", "timer_key", "claim_token"}]
--   timer_dead_letter_v2(p_timers, p_max_attempts)
--                                   [{"tenant_id", "queue", "timer_key", "payload"}], payload the
--                                   decompressed bytes in base64, or null to keep the stored form
--
-- Each v2 reads its rows and hands them to its v1, whose body -- statements, lock order, plans,
-- events -- is the behaviour and its header the reasoning: the lock order (queen.log_timers rows in
-- (tenant_id, queue, timer_key) ascending, SKIP LOCKED, then, for the dead-letter, queen.queues →
-- queen.log_partitions ascending id, then the leaves) is v1's, since the v1 body sorts what it is
-- given. The arrays exist only between the two, built from the named rows in their order in one
-- place. The rows are few (a failed fire, a shutdown), so the extra call costs nothing measurable.
--
-- Not here: the bridge's bridge_lock_v1 (V028). It names a batch's distinct timers by three key
-- arrays (tenant, queue, key: the primary key, nothing to confuse), once per batch on the ingest's
-- hot path, where a jsonb version measured +13 to +26 ms per 1,770-timer batch (PostgreSQL 15,
-- 2026-12-03, load ~35: 35-45 ms against 52-61 ms) for no gain in what a reader can follow.
--
-- The v1 functions are kept: a process of the previous release still running beside a new one during
-- a rolling restart keeps calling them (V055's convention).

CREATE OR REPLACE FUNCTION queen.timer_fail_v2(
    p_timers            JSONB,
    p_error             TEXT,
    p_transient         BOOLEAN,
    p_transient_backoff INTERVAL,
    p_backoff_base      INTERVAL,
    p_backoff_max       INTERVAL,
    p_max_attempts      INT)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, attempts INT, retry_at TIMESTAMPTZ, exhausted BOOLEAN)
LANGUAGE sql
VOLATILE
AS $$
    WITH t AS MATERIALIZED (
        SELECT r.tenant_id, r.queue, r.timer_key, r.claim_token, r.i
          FROM ROWS FROM (jsonb_to_recordset(queen.json_rows_v1('timer_fail_v2 timers', p_timers, '{tenant_id,queue,timer_key,claim_token}'))
                          AS (tenant_id UUID, queue TEXT, timer_key TEXT, claim_token UUID))
               WITH ORDINALITY AS r(tenant_id, queue, timer_key, claim_token, i))
    SELECT f.* FROM queen.timer_fail_v1(ARRAY(SELECT t.tenant_id FROM t ORDER BY t.i),
                                        ARRAY(SELECT t.queue FROM t ORDER BY t.i),
                                        ARRAY(SELECT t.timer_key FROM t ORDER BY t.i),
                                        ARRAY(SELECT t.claim_token FROM t ORDER BY t.i),
                                        p_error, p_transient, p_transient_backoff, p_backoff_base, p_backoff_max,
                                        p_max_attempts) f
$$;

CREATE OR REPLACE FUNCTION queen.timer_release_v2(p_timers JSONB)
RETURNS INT
LANGUAGE sql
VOLATILE
AS $$
    WITH t AS MATERIALIZED (
        SELECT r.tenant_id, r.queue, r.timer_key, r.claim_token, r.i
          FROM ROWS FROM (jsonb_to_recordset(queen.json_rows_v1('timer_release_v2 timers', p_timers, '{tenant_id,queue,timer_key,claim_token}'))
                          AS (tenant_id UUID, queue TEXT, timer_key TEXT, claim_token UUID))
               WITH ORDINALITY AS r(tenant_id, queue, timer_key, claim_token, i))
    SELECT queen.timer_release_v1(ARRAY(SELECT t.tenant_id FROM t ORDER BY t.i),
                                  ARRAY(SELECT t.queue FROM t ORDER BY t.i),
                                  ARRAY(SELECT t.timer_key FROM t ORDER BY t.i),
                                  ARRAY(SELECT t.claim_token FROM t ORDER BY t.i))
$$;

CREATE OR REPLACE FUNCTION queen.timer_dead_letter_v2(p_timers JSONB, p_max_attempts INT)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, dlq_id UUID, partition_id UUID)
LANGUAGE sql
VOLATILE
AS $$
    WITH t AS MATERIALIZED (
        SELECT r.tenant_id, r.queue, r.timer_key, decode(r.payload, 'base64') AS payload, r.i
          FROM ROWS FROM (jsonb_to_recordset(queen.json_rows_v1('timer_dead_letter_v2 timers', p_timers, '{tenant_id,queue,timer_key,payload}'))
                          AS (tenant_id UUID, queue TEXT, timer_key TEXT, payload TEXT))
               WITH ORDINALITY AS r(tenant_id, queue, timer_key, payload, i))
    SELECT d.* FROM queen.timer_dead_letter_v1(ARRAY(SELECT t.tenant_id FROM t ORDER BY t.i),
                                               ARRAY(SELECT t.queue FROM t ORDER BY t.i),
                                               ARRAY(SELECT t.timer_key FROM t ORDER BY t.i),
                                               ARRAY(SELECT t.payload FROM t ORDER BY t.i),
                                               p_max_attempts) d
$$;
