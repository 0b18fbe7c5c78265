-- The owner binds a bridge group to its login and its command topics to their tenants
-- (db/current/R__bridge_groups.sql): the group, the login, the topics as named rows (topic, tenant_id).
SELECT queen.bridge_group_bind_v1(?, ?, ?::jsonb)
