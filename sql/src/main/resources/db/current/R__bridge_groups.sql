-- Which login may change a bridge group's state (V131; issue 37, point 5). Called first by every function
-- that changes a group's topics, sealed patterns or offsets, inside their SECURITY DEFINER body: binds the group
-- to session_user (the login, not the owner the body runs as) at its first call, and refuses any other login
-- afterwards (42501, naming the bound login). Internal: granted to no role.
-- Lock order: the group's row of queen.bridge_groups (an insert the first time; a key probe after), before
-- anything the caller locks. PRICE: one primary-key probe per call.
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
        INSERT INTO queen.bridge_groups (group_id, login) VALUES (p_group, session_user::text)
        ON CONFLICT (group_id) DO NOTHING;
        SELECT g.login INTO v_login FROM queen.bridge_groups g WHERE g.group_id = p_group;
    END IF;
    IF v_login IS DISTINCT FROM session_user::text THEN
        RAISE EXCEPTION 'bridge group % is bound to login %, not %', p_group, v_login, session_user
            USING ERRCODE = '42501',
                  HINT = 'run each bridge group as one login; the owner moves a group with DELETE FROM queen.bridge_groups (V131)';
    END IF;
END
$$;
