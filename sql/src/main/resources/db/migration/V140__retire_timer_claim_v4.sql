-- V140  Retire timer_claim_v4: the claim of the release before the previous one
-- (docs/decisions.md#a-superseded-function-is-dropped-one-release-after-nothing-calls-it).
--
-- V129 moved the sweeper to timer_claim_v5 and issue 47 (the per-tenant fire budget) to timer_claim_v6; the
-- previous release's sweepers claim with v5 (kept, R__timer_claim.sql), so no process that may run beside this
-- release calls v4.
-- IF EXISTS: re-runnable, and a database that never had it is left as it is.
-- PRICE: a sweeper two releases old cannot claim (a rolling restart must not skip a release, as the rule says).
-- Locks: the DROP takes an exclusive lock on the function only.

DROP FUNCTION IF EXISTS queen.timer_claim_v4(INT, INTERVAL, INT, BIGINT, BOOLEAN);
