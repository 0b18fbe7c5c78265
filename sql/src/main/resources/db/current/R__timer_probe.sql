-- The sweeper's due probe: when to wake up, how much is due, how late. And its count of recurring series (below).
--
-- queen.timer_probe_v1(p_due_cap) answers in ONE read (STABLE: every statement sees the calling
-- statement's snapshot):
--   db_now           PostgreSQL's clock. Due-ness is never decided by a sweeper's clock.
--   next_visible_at  the earliest visible_at of any timer: when the sweeper has to wake up (NULL: empty).
--   due              timers visible now (visible_at <= db_now), counted up to p_due_cap. A claimed row
--                    and a row serving its backoff are NOT due: `due` is work nobody holds.
-- Lateness is db_now - next_visible_at when due > 0, measured from visible_at, not deliver_at: a timer
-- in backoff is late from the moment it may be retried, not while it waits for its retry.
--
-- Why per shard: the only secondary index is idx_log_timers_visible (shard, visible_at); the earliest
-- visible_at is one index probe per shard, and the due count a range scan per shard that stops at the cap.
--
-- Locks: none (a plain read; it never waits on a row).
--
-- PRICE: 64 index probes per call, plus at most p_due_cap index entries while a backlog exists. The
-- count is exact below the cap and saturates at it ("at least p_due_cap"). Dead index entries at the
-- head of a shard (claimed-then-deleted rows not yet vacuumed) are walked by the first probe; that is
-- what the table's autovacuum settings are for.

CREATE OR REPLACE FUNCTION queen.timer_probe_v1(p_due_cap INT)
RETURNS TABLE (db_now TIMESTAMPTZ, next_visible_at TIMESTAMPTZ, due INT)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
STABLE
AS $$
DECLARE
    v_now  TIMESTAMPTZ := now();
    v_next TIMESTAMPTZ;
    v_due  INT := 0;
    v_n    INT;
BEGIN
    IF p_due_cap IS NULL OR p_due_cap < 1 THEN
        RAISE EXCEPTION 'timer_probe_v1: p_due_cap must be >= 1, got %', p_due_cap USING ERRCODE = '22023';
    END IF;

    -- Lock order: none (read only).
    SELECT min(f.visible_at) INTO v_next
      FROM generate_series(0, 63) AS s(shard)
     CROSS JOIN LATERAL (SELECT t.visible_at
                           FROM queen.log_timers t
                          WHERE t.shard = s.shard::smallint
                          ORDER BY t.visible_at
                          LIMIT 1) f;

    IF v_next IS NOT NULL AND v_next <= v_now THEN
        FOR s IN 0..63 LOOP
            -- Lock order: none (read only). Stops reading at the cap.
            SELECT count(*) INTO v_n
              FROM (SELECT 1
                      FROM queen.log_timers t
                     WHERE t.shard = s::smallint
                       AND t.visible_at <= v_now
                     LIMIT p_due_cap - v_due) d;
            v_due := v_due + v_n;
            EXIT WHEN v_due >= p_due_cap;
        END LOOP;
    END IF;

    RETURN QUERY SELECT v_now, v_next, v_due;
END;
$$;

-- queen.timer_recurring_count_v1(p_cap): the recurring series with a pending occurrence, counted up to
-- p_cap, for the sweeper's queen_timers_recurring_series gauge (docs/recurring.md). A series keeps exactly
-- one row, its pending occurrence, so its rows are its series. Its own function because the sweeper's
-- role reads no table of timers (db/least-privilege.sql).
-- PRICE: `recurrence IS NOT NULL` is the predicate of the partial index idx_log_timers_recurring (V002),
-- so this reads that index (index-only where the visibility map allows), never a one-shot row; it stops
-- at the cap. It runs every few seconds on a thread of its own, never on the fire path. Locks: none.
CREATE OR REPLACE FUNCTION queen.timer_recurring_count_v1(p_cap INT)
RETURNS BIGINT
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
STABLE
AS $$
    -- Lock order: none (read only).
    SELECT count(*) FROM (SELECT 1 FROM queen.log_timers t WHERE t.recurrence IS NOT NULL LIMIT greatest(p_cap, 0)) r
$$;
