-- V131  A bridge group's state is changed only by the login bound to it (issue 37, point 5).
--
-- queen.bridge_groups binds each bridge group to the database login (session_user) that first ran it: the
-- group's topics (bridge_topics_register_v1), sealed queue patterns (bridge_sealed_queues_set_v1) and offsets
-- (bridge_offset_start_v1, bridge_apply_v4) are then changed only by that login, through
-- queen.bridge_group_login_v1 (db/current/R__bridge_groups.sql). Before, any login of queen_bridge could re-bind
-- another group's topic to another tenant, erase its sealing patterns with '{}', or rewrite its offsets
-- without an audit event. The operator's `offsets set` (bridge_offset_set_v2, with its audit event) is not
-- bound: moving a group's offsets on purpose is the operator's.
--
-- Existing groups are bound at the first call after this migration, to the login making it: run the upgrade
-- with the bridges' own logins (a group first touched by another login is refused from then on).
-- To move a group to another login, as the owner: DELETE FROM queen.bridge_groups WHERE group_id = '...';
--
-- PRICE: one primary-key probe per batch and per start call (an insert the first time); a group cannot be
-- shared by two bridge logins (run one login per group); rotating to a new login name needs the owner's
-- DELETE above. Locks: CREATE TABLE takes none on existing tables.

CREATE TABLE IF NOT EXISTS queen.bridge_groups (
    group_id TEXT PRIMARY KEY,
    login    TEXT NOT NULL,
    bound_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
