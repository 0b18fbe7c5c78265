-- What a bridge login may touch: the tenants and the command topics the schema owner bound to its groups
-- (queen.bridge_group_bind_v1, R__bridge_groups.sql), never what its call names. Every function a bridge login may call
-- that takes tenants or topics in its arguments or rows calls these first, so a call naming another tenant or another
-- group's topic is refused whole (42501) before it reads or writes anything. (Before this file, bridge_apply_v4 took a
-- group's rows at their word: a login bound to one tenant's group staged, replaced and deleted another tenant's timers
-- and wrote its audit events; bridge_lock_v2 returned and locked its rows.) Here, not in R__bridge_groups.sql, because
-- the LANGUAGE sql callers (R__bridge_apply.sql) need them to exist when they are created: repeatable migrations run in
-- the order of their names.

-- The tenants a bridge login may touch: those of the command topics the owner bound to its groups
-- (queen.bridge_groups.login = the login, queen.bridge_topics of those groups), p_group's alone when given; never a
-- tenant the caller names. session_user is the login, not the owner the SECURITY DEFINER caller runs as. Internal:
-- granted to no role.
-- PRICE: one index scan of each of two small tables (a row per group, a row per command topic). No lock.
CREATE OR REPLACE FUNCTION queen.bridge_login_tenants_v1(p_group TEXT)
RETURNS UUID[]
LANGUAGE sql
STABLE
AS $$
    SELECT coalesce(array_agg(DISTINCT t.tenant_id), '{}')
      FROM queen.bridge_groups g
      JOIN queen.bridge_topics t ON t.group_id = g.group_id
     WHERE g.login = session_user::text AND (p_group IS NULL OR g.group_id = p_group)
$$;

-- Called by every function a bridge login may call that takes tenants in its arguments or rows, before it reads or
-- writes anything: refuses (42501, naming the first tenant and what the login may touch) a call naming a tenant that
-- is not one of the login's (queen.bridge_login_tenants_v1; p_group's alone when given), so the whole call is refused
-- and nothing is written. A login that may write queen.log_timers itself (the owner, a superuser: the tests, a
-- single-role development database) is not held: it could write the rows anyway, as bridge_group_login_v1 says of
-- queen.bridge_groups. Internal: granted to no role.
-- PRICE: one privilege lookup, and for a service login the bound tenants read once and each distinct tenant of the
-- call compared with them (a batch names one tenant or a few). No lock.
CREATE OR REPLACE FUNCTION queen.bridge_require_tenants_v1(p_what TEXT, p_group TEXT, p_named UUID[])
RETURNS VOID
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
    v_bound UUID[];
    v_off   UUID;
    v_null  BOOLEAN := FALSE;
BEGIN
    IF has_table_privilege(session_user, 'queen.log_timers', 'INSERT') THEN
        RETURN;
    END IF;
    v_bound := queen.bridge_login_tenants_v1(p_group);
    SELECT n, n IS NULL INTO v_off, v_null
      FROM (SELECT DISTINCT n FROM unnest(p_named) AS n) d
     WHERE n IS NULL OR n <> ALL (v_bound)
     ORDER BY n NULLS FIRST
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION '%: % is not a tenant of %: the schema owner binds a group''s command topics to their tenants (queen-timers migrate), and a bridge login touches those tenants only (bound: %)',
            p_what, CASE WHEN v_null THEN 'a row without a tenant' ELSE 'tenant ' || v_off END,
            CASE WHEN p_group IS NULL THEN 'the bridge groups of login ' || session_user ELSE 'bridge group ' || p_group END,
            CASE WHEN cardinality(v_bound) = 0 THEN 'none' ELSE array_to_string(v_bound, ', ') END
            USING ERRCODE = '42501', HINT = 'docs/schema-and-roles.md#database-roles';
    END IF;
END
$$;

-- Refuses (42501) a command topic that the owner did not bind to p_group, for a login that may not write
-- queen.bridge_topics (as bridge_topics_register_v1): an offset of another group's topic, or of a topic nobody bound,
-- is not this group's to store. Internal: granted to no role. PRICE: one primary-key probe per distinct topic. No lock.
CREATE OR REPLACE FUNCTION queen.bridge_require_topics_v1(p_what TEXT, p_group TEXT, p_topics TEXT[])
RETURNS VOID
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
    v_off TEXT;
BEGIN
    IF has_table_privilege(session_user, 'queen.bridge_topics', 'INSERT') THEN
        RETURN;
    END IF;
    SELECT coalesce(t, '(none)') INTO v_off
      FROM (SELECT DISTINCT t FROM unnest(p_topics) AS t) d
     WHERE NOT EXISTS (SELECT 1 FROM queen.bridge_topics b WHERE b.group_id = p_group AND b.topic = d.t)
     ORDER BY t NULLS FIRST
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION '%: command topic % is not bound to bridge group % (the schema owner binds a group''s topics: queen-timers migrate)',
            p_what, v_off, p_group
            USING ERRCODE = '42501', HINT = 'docs/schema-and-roles.md#database-roles';
    END IF;
END
$$;
