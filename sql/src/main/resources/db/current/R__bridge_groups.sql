-- Which login may change a bridge group's state, and who says so (queen.bridge_groups, V004).
--
-- queen.bridge_group_bind_v1(group, login, topics): the schema owner binds a bridge group to the login that runs it,
-- and its command topics to their tenants, exactly the declared ones: `queen-timers migrate` calls it with the bridge's
-- declaration (io.queen.timers.sql.BridgeGroups). Owner's alone: granted to no role. p_topics are named rows
-- [{"topic", "tenant_id"}] (queen.json_rows_v1). A topic no longer declared is unbound from the group (its stored offsets
-- stay). Refuses (22023) a topic another group binds to another tenant: one topic stands for one tenant whichever group
-- reads it (two would stage one command under two tenants, and make a replay's topic ambiguous).
-- Lock order: the group's row of queen.bridge_groups, then its rows of queen.bridge_topics (as the bridge's own calls:
-- the group's row first).
-- PRICE: none on the hot path (an owner's call at migrate).
CREATE OR REPLACE FUNCTION queen.bridge_group_bind_v1(p_group TEXT, p_login TEXT, p_topics JSONB)
RETURNS VOID
LANGUAGE plpgsql
VOLATILE
AS $$
DECLARE
    v_clash RECORD;
BEGIN
    IF p_group IS NULL OR btrim(p_group) = '' OR p_login IS NULL OR btrim(p_login) = '' THEN
        RAISE EXCEPTION 'bridge_group_bind_v1: a group and a login are required' USING ERRCODE = '22023';
    END IF;
    INSERT INTO queen.bridge_groups AS g (group_id, login, bound_by) VALUES (p_group, p_login, 'owner')
    ON CONFLICT (group_id) DO UPDATE SET login = EXCLUDED.login, bound_by = 'owner', bound_at = now()
        WHERE g.login IS DISTINCT FROM EXCLUDED.login OR g.bound_by <> 'owner';
    SELECT n.topic, n.tenant_id, b.group_id, b.tenant_id AS other INTO v_clash
      FROM jsonb_to_recordset(queen.json_rows_v1('bridge_group_bind_v1 topics', p_topics, '{topic,tenant_id}'))
           AS n(topic TEXT, tenant_id UUID)
      JOIN queen.bridge_topics b ON b.topic = n.topic AND b.group_id <> p_group AND b.tenant_id <> n.tenant_id
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'topic % cannot stand for tenant % in bridge group %: group % binds it to tenant %',
            v_clash.topic, v_clash.tenant_id, p_group, v_clash.group_id, v_clash.other
            USING ERRCODE = '22023',
                  HINT = 'one topic, one tenant: fix the declaration, or as the owner DELETE FROM queen.bridge_topics WHERE group_id = ''' || v_clash.group_id || '''';
    END IF;
    DELETE FROM queen.bridge_topics b
     WHERE b.group_id = p_group
       AND b.topic <> ALL (ARRAY(SELECT n.topic FROM jsonb_to_recordset(p_topics) AS n(topic TEXT)));
    INSERT INTO queen.bridge_topics AS b (group_id, topic, tenant_id, bound_by)
    SELECT p_group, n.topic, n.tenant_id, 'owner'
      FROM jsonb_to_recordset(p_topics) AS n(topic TEXT, tenant_id UUID)
    ON CONFLICT (group_id, topic) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, bound_by = 'owner', registered_at = now()
        WHERE b.tenant_id IS DISTINCT FROM EXCLUDED.tenant_id OR b.bound_by <> 'owner';
END
$$;

-- Called first by every function that changes a group's topics, sealed patterns or offsets, inside their SECURITY
-- DEFINER body: refuses (42501, naming the bound login) any login but the one the group is bound to. A group nobody
-- bound is refused (42501, naming the owner's step) to every login that may not write queen.bridge_groups (the service
-- roles); a login that may (the owner, a superuser) binds it to itself at its first call ('first call'): it could
-- write the row anyway. session_user is the login, not the owner the body runs as. Internal: granted
-- to no role.
-- Lock order: the group's row of queen.bridge_groups (an insert the first time; a key probe after), before
-- anything the caller locks. PRICE: one primary-key probe per call; one privilege lookup on an unbound group.
CREATE OR REPLACE FUNCTION queen.bridge_group_login_v1(p_group TEXT)
RETURNS VOID
LANGUAGE plpgsql
VOLATILE
AS $$
DECLARE
    v_login TEXT;
BEGIN
    IF p_group IS NULL THEN
        RAISE EXCEPTION 'a bridge group is required' USING ERRCODE = '22023';
    END IF;
    SELECT g.login INTO v_login FROM queen.bridge_groups g WHERE g.group_id = p_group;
    IF v_login IS NULL THEN
        IF NOT has_table_privilege(session_user, 'queen.bridge_groups', 'INSERT') THEN
            RAISE EXCEPTION 'bridge group % is bound to no login: the schema owner binds a group to the login it runs as, with its command topics'' tenants (queen-timers migrate with bridge.login=% and this bridge''s bridge.group.id, command.topics and their tenants)',
                p_group, session_user
                USING ERRCODE = '42501', HINT = 'docs/schema-and-roles.md#database-roles';
        END IF;
        INSERT INTO queen.bridge_groups (group_id, login) VALUES (p_group, session_user::text)
        ON CONFLICT (group_id) DO NOTHING;
        SELECT g.login INTO v_login FROM queen.bridge_groups g WHERE g.group_id = p_group;
    END IF;
    IF v_login IS DISTINCT FROM session_user::text THEN
        RAISE EXCEPTION 'bridge group % is bound to login %, not %', p_group, v_login, session_user
            USING ERRCODE = '42501',
                  HINT = 'run each bridge group as the login the schema owner bound it to; the owner moves it with queen-timers migrate (bridge.login)';
    END IF;
END
$$;

