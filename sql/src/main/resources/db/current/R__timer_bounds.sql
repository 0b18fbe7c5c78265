-- The owner's bounds on what a sweeper's login may pass (queen.timer_settings, V006).
-- (Named "bounds" so Flyway, which runs repeatable files by name, creates these before R__timer_fail.sql, whose
-- LANGUAGE sql timer_fail_v2 names them and is checked at creation.)
--
-- queen.timer_bounds_v1(): the one row of queen.timer_settings, and whether its retry bounds bind the calling login
-- (binds_caller): they bind every login that may not UPDATE queen.timer_settings (every service role); a login that
-- may (the owner, a superuser) could move them, so holding it to them would protect nothing. max_lease and
-- min_cleanup_idle hold for every caller. Read by the sweeper at start, which refuses a setting beyond them,
-- naming it (io.queen.timers.sweeper.OwnerBounds), and by the checks below. Reads one row; takes no lock.
-- PRICE: one privilege lookup (catalog caches) per call.
CREATE OR REPLACE FUNCTION queen.timer_bounds_v1()
RETURNS TABLE (binds_caller BOOLEAN, max_lease INTERVAL, min_cleanup_idle INTERVAL, max_transient_backoff INTERVAL,
               max_backoff INTERVAL, min_attempts INT, min_dead_letters_in_row INT)
LANGUAGE sql
STABLE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
    -- session_user: the login, which a SECURITY DEFINER body does not change (current_user is the owner here)
    SELECT NOT has_table_privilege(session_user, 'queen.timer_settings', 'UPDATE'), s.max_lease, s.min_cleanup_idle,
           s.max_transient_backoff, s.max_backoff, s.min_attempts, s.min_dead_letters_in_row
      FROM queen.timer_settings s
$$;

-- Refuses (22023, naming the owner's setting) a max attempts below min_attempts, or none, from a login the bounds
-- bind: a timer is exhausted, then dead-lettered, only after the owner's number of failures. `p_what` names the
-- caller in the message. Internal: called by timer_fail_v2 and timer_dead_letter_v3, granted to no role.
CREATE OR REPLACE FUNCTION queen.timer_require_attempts_v1(p_what TEXT, p_max_attempts INT)
RETURNS VOID
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
    b RECORD;
BEGIN
    SELECT * INTO b FROM queen.timer_bounds_v1();
    IF b.binds_caller AND (p_max_attempts IS NULL OR p_max_attempts < b.min_attempts) THEN
        RAISE EXCEPTION '%: max attempts % is below % (queen.timer_settings.min_attempts, the owner''s)',
            p_what, coalesce(p_max_attempts::text, 'NULL'), b.min_attempts
            USING ERRCODE = '22023', HINT = 'as the owner: UPDATE queen.timer_settings SET min_attempts = ...';
    END IF;
END;
$$;

-- Refuses (22023, naming the owner's setting) a backoff outside (0, max_transient_backoff] (transient) or
-- (0, max_backoff] (permanent base and maximum), or none, from a login the bounds bind: a transient failure spends no
-- attempt, so its backoff alone decides how long a due timer hides. Internal: called by timer_fail_v2, granted to no role.
CREATE OR REPLACE FUNCTION queen.timer_require_backoffs_v1(p_what TEXT, p_transient_backoff INTERVAL,
                                                           p_backoff_base INTERVAL, p_backoff_max INTERVAL)
RETURNS VOID
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
    b RECORD;
BEGIN
    SELECT * INTO b FROM queen.timer_bounds_v1();
    IF NOT b.binds_caller THEN
        RETURN;
    END IF;
    IF NOT coalesce(p_transient_backoff > INTERVAL '0' AND p_transient_backoff <= b.max_transient_backoff, false) THEN
        RAISE EXCEPTION '%: transient backoff % is not within (0, %] (queen.timer_settings.max_transient_backoff, the owner''s)',
            p_what, coalesce(p_transient_backoff::text, 'NULL'), b.max_transient_backoff
            USING ERRCODE = '22023', HINT = 'as the owner: UPDATE queen.timer_settings SET max_transient_backoff = ...';
    END IF;
    IF NOT coalesce(p_backoff_base > INTERVAL '0' AND p_backoff_base <= b.max_backoff
                    AND p_backoff_max > INTERVAL '0' AND p_backoff_max <= b.max_backoff, false) THEN
        RAISE EXCEPTION '%: backoff base % and max % are not within (0, %] (queen.timer_settings.max_backoff, the owner''s)',
            p_what, coalesce(p_backoff_base::text, 'NULL'), coalesce(p_backoff_max::text, 'NULL'), b.max_backoff
            USING ERRCODE = '22023', HINT = 'as the owner: UPDATE queen.timer_settings SET max_backoff = ...';
    END IF;
END;
$$;
