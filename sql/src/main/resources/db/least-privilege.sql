-- Least privilege in the database (docs/schema-and-roles.md#database-roles). Migrations.migrate runs it after EVERY migrate to
-- the newest version, in one transaction on the connection holding the migration lock (not a Flyway
-- callback: that takes a connection more than the pool of 3 has), so a new or re-created function is
-- covered as soon as it exists, and a grant dropped from a list here is taken away on the next migrate. It runs as the migrating role (the owner of the queen objects).
--
-- Roles (NOLOGIN groups; a login user is made a member of one of them):
--   queen_bridge    the bridge: EXECUTE its functions, SELECT bridge_offsets and queues, and the relay's share
--   queen_sweeper   the sweeper: EXECUTE its functions, SELECT log_dlq, and the relay's share
--   queen_operator  the CLI's reads, `offsets set` and `dead-letters replay|drop` (never `migrate`: that is the owner's)
-- None of them may INSERT, UPDATE, DELETE or TRUNCATE any table: every write goes through a SECURITY
-- DEFINER function (owner's rights, search_path pinned to pg_catalog, queen, pg_temp), which writes only
-- what its contract says. The services refuse to start as a role that can write a table directly
-- (db.role.check, io.queen.timers.core.db.DatabaseRole).
--
-- A function created by a migration never has PUBLIC's EXECUTE, not even until this file runs: Migrations.migrate
-- first sets the migrating role's ALTER DEFAULT PRIVILEGES ... REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC.
--
-- The roles are created here when the migrating role may (superuser or CREATEROLE); otherwise a DBA
-- creates them first (docs/schema-and-roles.md#database-roles), and the migration stops, naming them, until they exist.
-- Roles are cluster-wide: every database of the cluster shares them.
--
-- PRICE: the grants are re-applied on every migrate (a few catalog writes, milliseconds). The functions
-- the roles call are SECURITY DEFINER with SET search_path: a SQL function so marked is never inlined
-- into its caller's plan, and each call saves and restores one setting (microseconds; the services make
-- one such call per batch, claim, fire or relay round, never one per timer). Queen's own log functions
-- (log_push_v1 and its helpers, called by Queen's clients sharing the database) keep Queen's grants.
DO $$
DECLARE
    r TEXT;
    f RECORD;
    can_create BOOLEAN;
    grants CONSTANT TEXT[][] := ARRAY[
        -- role, function (every overload of the name). Not listed, so the owner's alone: timer_advance_v1 (tests'
        -- clock: it makes timers fire early, R__timer_advance.sql).
        ['queen_bridge', 'bridge_apply_v4'], ['queen_bridge', 'bridge_lock_v2'],
        -- the audit relay's lease, read and delete: the relay's roles only (R__timer_audit_relay.sql)
        ['queen_bridge', 'timer_audit_lease_v1'], ['queen_bridge', 'timer_audit_lease_release_v1'],
        ['queen_bridge', 'timer_audit_read_v3'], ['queen_bridge', 'timer_audit_delete_v3'], ['queen_bridge', 'timer_trace_fields_v1'],
        ['queen_bridge', 'bridge_topics_register_v1'], ['queen_bridge', 'bridge_offset_start_v1'],
        ['queen_bridge', 'bridge_sealed_queues_set_v1'], ['queen_bridge', 'timer_tenant_pending_v1'],
        ['queen_bridge', 'timer_tenant_series_v1'],
        ['queen_sweeper', 'timer_probe_v1'], ['queen_sweeper', 'timer_recurring_count_v1'], ['queen_sweeper', 'timer_claim_v6'],
        ['queen_sweeper', 'timer_fire_v3'], ['queen_sweeper', 'timer_fail_v2'],
        ['queen_sweeper', 'timer_release_v2'], ['queen_sweeper', 'timer_hold_alone_v1'],
        ['queen_sweeper', 'timer_dead_letter_v3'], ['queen_sweeper', 'timer_skip_v1'], ['queen_sweeper', 'log_cleanup_partitions_v1'],
        ['queen_sweeper', 'timer_audit_lease_v1'], ['queen_sweeper', 'timer_audit_lease_release_v1'],
        ['queen_sweeper', 'timer_audit_read_v3'], ['queen_sweeper', 'timer_audit_delete_v3'],
        ['queen_sweeper', 'timer_trace_fields_v1'], ['queen_sweeper', 'timer_bounds_v1'],
        ['queen_operator', 'timer_list_v2'], ['queen_operator', 'timer_peek_v2'], ['queen_operator', 'timer_series_v1'],
        ['queen_operator', 'bridge_offset_set_v2'],
        ['queen_operator', 'timer_dead_letters_v1'], ['queen_operator', 'timer_dead_letter_remove_v1']];
    reads CONSTANT TEXT[][] := ARRAY[
        -- role, table or view
        ['queen_bridge', 'bridge_offsets'], ['queen_bridge', 'queues'],
        ['queen_bridge', 'timer_audit_outbox'], ['queen_bridge', 'timer_audit_events'],
        ['queen_sweeper', 'log_dlq'], ['queen_sweeper', 'timer_audit_outbox'], ['queen_sweeper', 'timer_audit_events'],
        ['queen_operator', 'bridge_offsets'], ['queen_operator', 'queues'],
        -- `dead-letters replay` sends to the topic registered for the dead letter's tenant, and refuses another's
        ['queen_operator', 'bridge_topics'], ['queen_operator', 'log_partitions'],
        ['queen_operator', 'log_txns'], ['queen_operator', 'log_segments']];
    queens_own CONSTANT TEXT[] := ARRAY['log_push_v1', 'log_provision_v1', 'log_lock_partitions_v1', 'log_append_v1'];
    roles CONSTANT TEXT[] := ARRAY['queen_bridge', 'queen_sweeper', 'queen_operator'];
    i INT;
BEGIN
    SELECT rolsuper OR rolcreaterole INTO can_create FROM pg_roles WHERE rolname = current_user;
    FOREACH r IN ARRAY roles LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            IF NOT can_create THEN
                RAISE EXCEPTION 'role % does not exist, and % may not create roles', r, current_user
                    USING HINT = 'as a superuser: CREATE ROLE queen_bridge NOLOGIN; CREATE ROLE queen_sweeper NOLOGIN;'
                                 ' CREATE ROLE queen_operator NOLOGIN; (docs/schema-and-roles.md#database-roles), then migrate again';
            END IF;
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL; -- another database of the cluster, migrating at the same moment, created it
            END;
        END IF;
    END LOOP;

    -- Start from nothing: every function and table the migrating role owns loses PUBLIC's and the roles'
    -- privileges (objects a Queen broker sharing the schema owns are Queen's to grant).
    FOR f IN SELECT p.oid::regprocedure AS sig FROM pg_proc p
              WHERE p.pronamespace = 'queen'::regnamespace AND p.proowner = current_user::regrole
                AND p.proname <> ALL (queens_own) LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC, queen_bridge, queen_sweeper, queen_operator', f.sig);
    END LOOP;
    FOR f IN SELECT c.oid::regclass AS rel FROM pg_class c
              WHERE c.relnamespace = 'queen'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
                AND c.relowner = current_user::regrole LOOP
        EXECUTE format('REVOKE ALL ON %s FROM queen_bridge, queen_sweeper, queen_operator', f.rel);
    END LOOP;

    -- Queen's own functions keep what PostgreSQL gives a new function, EXECUTE for PUBLIC (Queen's clients call them;
    -- they are not SECURITY DEFINER), which Migrations' ALTER DEFAULT PRIVILEGES no longer gives where we create them.
    FOR f IN SELECT p.oid::regprocedure AS sig FROM pg_proc p
              WHERE p.pronamespace = 'queen'::regnamespace AND p.proowner = current_user::regrole
                AND p.proname = ANY (queens_own) LOOP
        -- revoked first, so the ACL reads the same whichever migrate created the function
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f.sig);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO PUBLIC', f.sig);
    END LOOP;

    GRANT USAGE ON SCHEMA queen, queen_timers TO queen_bridge, queen_sweeper, queen_operator;
    -- the readiness probe reads the schema version (io.queen.timers.sql.Migrations#pendingCount)
    GRANT SELECT ON queen_timers.schema_history TO queen_bridge, queen_sweeper, queen_operator;
    FOR i IN 1 .. array_length(grants, 1) LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_proc WHERE pronamespace = 'queen'::regnamespace AND proname = grants[i][2]) THEN
            RAISE EXCEPTION 'db/least-privilege.sql grants queen.% to %, which does not exist', grants[i][2], grants[i][1];
        END IF;
        FOR f IN SELECT p.oid::regprocedure AS sig FROM pg_proc p
                  WHERE p.pronamespace = 'queen'::regnamespace AND p.proname = grants[i][2] LOOP
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f.sig, grants[i][1]);
        END LOOP;
    END LOOP;
    FOR i IN 1 .. array_length(reads, 1) LOOP
        EXECUTE format('GRANT SELECT ON queen.%I TO %I', reads[i][2], reads[i][1]);
    END LOOP;
END
$$;
