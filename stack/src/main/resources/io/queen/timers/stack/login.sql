-- A login that is a member of one group role and nothing more, with a new password, as a DBA makes a service's login
-- (docs/schema-and-roles.md#database-roles): made, or given the new password when it exists (a stack whose logins are
-- kept between runs). Its values are this transaction's settings queen_stack.login, queen_stack.password and
-- queen_stack.group (set_config, bound), so none is spliced into the text. Takes no lock of the schema's tables.
DO $$
DECLARE
    login text := current_setting('queen_stack.login');
BEGIN
    BEGIN
        EXECUTE format('CREATE ROLE %I LOGIN', login);
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
        NULL; -- kept from an earlier run: its password and attributes are set again below
    END;
    EXECUTE format('ALTER ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %L',
                   login, current_setting('queen_stack.password'));
    EXECUTE format('GRANT %I TO %I', current_setting('queen_stack.group'), login);
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), login);
END
$$
