-- A bridge tells the database, at start, which tenant each of its command topics stands for (queen.bridge_topics, V004), so that the
-- offset functions (R__bridge_offset_set.sql) send their audit event to the tenant that owns the topic, and
-- `dead-letters replay` sends to that tenant's topic only.
-- Who decides the mapping: the schema owner (queen.bridge_group_bind_v1, at migrate). From a
-- login that may not write queen.bridge_topics (the service roles) this only checks: every topic it names must be
-- bound by the owner to this group with that tenant, or the call is refused (42501, naming the topic and what it is
-- bound to) and nothing is written; so a bridge whose configuration disagrees with the owner's does not start. A login
-- that may write the table (the owner, a superuser: the tests, a single-role development database) registers them
-- (upsert: the configuration of the last bridge of the group to start wins): it could write the rows anyway.
-- Lock order: the group's row of queen.bridge_groups (bridge_group_login_v1), then the group's topic rows.
-- PRICE: one statement per start.
CREATE OR REPLACE FUNCTION queen.bridge_topics_register_v1(p_group TEXT, p_topics TEXT[], p_tenants UUID[])
RETURNS VOID
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
DECLARE
    v_off RECORD;
BEGIN
    PERFORM queen.bridge_group_login_v1(p_group); -- only the group's own login names its topics
    -- a tenant the owner did not bind to the group is refused before anything else is said about the call
    PERFORM queen.bridge_require_tenants_v1('bridge_topics_register_v1', p_group, p_tenants);
    IF cardinality(p_topics) IS DISTINCT FROM cardinality(p_tenants) THEN
        RAISE EXCEPTION 'one tenant per topic' USING ERRCODE = '22023';
    END IF;
    IF NOT has_table_privilege(session_user, 'queen.bridge_topics', 'INSERT') THEN
        SELECT t.topic, t.tenant, b.tenant_id AS bound INTO v_off
          FROM unnest(p_topics, p_tenants) AS t(topic, tenant)
          LEFT JOIN queen.bridge_topics b ON b.group_id = p_group AND b.topic = t.topic
         WHERE b.tenant_id IS DISTINCT FROM t.tenant
         ORDER BY t.topic
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'command topic % of bridge group % is %, not tenant % as this bridge is configured: the schema owner binds a group''s topics (queen-timers migrate with this bridge''s command.topics and their tenants)',
                v_off.topic, p_group, CASE WHEN v_off.bound IS NULL THEN 'bound to no tenant' ELSE 'bound to tenant ' || v_off.bound END,
                v_off.tenant
                USING ERRCODE = '42501', HINT = 'docs/schema-and-roles.md#database-roles';
        END IF;
        RETURN;
    END IF;
    INSERT INTO queen.bridge_topics (group_id, topic, tenant_id)
    SELECT p_group, t.topic, t.tenant FROM unnest(p_topics, p_tenants) AS t(topic, tenant)
    ON CONFLICT (group_id, topic) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, bound_by = 'bridge', registered_at = now()
        WHERE queen.bridge_topics.tenant_id IS DISTINCT FROM EXCLUDED.tenant_id;
END
$$;
