-- V135  A bridge group and its command topics are bound by the schema owner, never by the first caller
-- (issue 47, point 3).
--
-- V131 bound a group to whichever login called first, and a bridge registered its own topics' tenants: a login of
-- queen_bridge that called bridge_offset_start_v1('victim-group', ...) before the victim's bridge owned the victim's
-- offsets; and one that registered tenant A's topic for tenant B under a fresh group of its own made every replay of
-- A's dead letters refused (the topic then named two tenants, B's id in the error). From this migration on
-- (db/current/R__bridge_groups.sql, R__bridge_topics.sql):
--   * queen.bridge_group_bind_v1(group, login, topics), the owner's alone (granted to no role): binds the group to the
--     login that runs it and sets its command topics' tenants, exactly the declared ones. `queen-timers migrate` calls
--     it with the bridge's declaration (bridge.login, bridge.group.id, command.topics, command.topic.tenants,
--     topic.<name>.tenant; docs/schema-and-roles.md#database-roles); it refuses a topic another group binds to another
--     tenant.
--   * a group no owner bound is refused (42501, naming the fix) to every login that may not write queen.bridge_groups:
--     its topics, sealed patterns, offsets and batches. A login that may (the owner, a superuser: the tests, a
--     single-role development database) still binds it to itself at its first call: it could write the row anyway.
--   * bridge_topics_register_v1 from such a login only checks its topics against the owner's binding (42501 on a
--     topic not bound to that tenant); it writes nothing.
-- The groups V131 bound and the topics bridges registered before this upgrade stay bound as they are, so a running
-- deployment goes on after `migrate` without an owner's step; `bound_by` (below) tells them from the owner's bindings.
-- Check them once, as the owner: SELECT * FROM queen.bridge_groups WHERE bound_by <> 'owner'; (and bridge_topics).
--   bound_by  'owner': by queen.bridge_group_bind_v1. 'first call' (a group) / 'bridge' (a topic): by a bridge's own
--             call, before this migration or, since, by a login that may write the table itself.
--
-- PRICE: a new group, a new topic or a new tenant for a topic needs the owner's step before its bridges start (compose's
-- and the Kubernetes `migrate` pass the bridge's declaration; by hand: queen-timers migrate with QUEEN_BRIDGE_LOGIN and
-- the bridge's QUEEN_COMMAND_TOPICS, QUEEN_COMMAND_TOPIC_TENANTS, QUEEN_BRIDGE_GROUP_ID); a group that no bridge has run
-- since V131 (no row in queen.bridge_groups) is refused to its least-privilege login until then. A binding a hostile
-- first caller made before this upgrade is kept until the owner binds the group again. One privilege lookup per call
-- on an unbound group only. Locks: ADD COLUMN with a constant default rewrites nothing; each takes an exclusive lock on
-- its table (a few rows: one per group, one per group's topic) until this migration commits, which every bridge batch
-- (bridge_apply_v4 probes queen.bridge_groups) waits for (milliseconds).

ALTER TABLE queen.bridge_groups ADD COLUMN IF NOT EXISTS bound_by TEXT NOT NULL DEFAULT 'first call'
    CHECK (bound_by IN ('owner', 'first call'));
ALTER TABLE queen.bridge_topics ADD COLUMN IF NOT EXISTS bound_by TEXT NOT NULL DEFAULT 'bridge'
    CHECK (bound_by IN ('owner', 'bridge'));
