-- Drops the login queen_stack.login (this transaction's setting, bound) that login.sql made, with its CONNECT grant.
DO $$
BEGIN
    EXECUTE format('DROP OWNED BY %I', current_setting('queen_stack.login'));
    EXECUTE format('DROP ROLE IF EXISTS %I', current_setting('queen_stack.login'));
END
$$
