-- A bridge registers, at start, which tenant each of its command topics stands for (V123), so that the
-- offset functions (R__bridge_offset_set.sql) send their audit event to the tenant that owns the topic.
-- Upsert: the configuration of the last bridge of the group to start wins. PRICE: one statement per start.
CREATE OR REPLACE FUNCTION queen.bridge_topics_register_v1(p_group TEXT, p_topics TEXT[], p_tenants UUID[])
RETURNS VOID
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
BEGIN
    PERFORM queen.bridge_group_login_v1(p_group); -- only the group's own login re-binds its topics (V131)
    IF cardinality(p_topics) IS DISTINCT FROM cardinality(p_tenants) THEN
        RAISE EXCEPTION 'one tenant per topic' USING ERRCODE = '22023';
    END IF;
    INSERT INTO queen.bridge_topics (group_id, topic, tenant_id)
    SELECT p_group, t.topic, t.tenant FROM unnest(p_topics, p_tenants) AS t(topic, tenant)
    ON CONFLICT (group_id, topic) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, registered_at = now()
        WHERE queen.bridge_topics.tenant_id IS DISTINCT FROM EXCLUDED.tenant_id;
END
$$;
