-- V132  Retire timer_claim_v3: the claim of the release before the previous one
-- (docs/decisions.md#a-superseded-function-is-dropped-one-release-after-nothing-calls-it).
--
-- V122 moved the sweeper to timer_claim_v4 and V129 to timer_claim_v5; the previous release's sweepers claim
-- with v4 (kept, R__timer_claim.sql), so no process that may run beside this release calls v3.
-- IF EXISTS: re-runnable, and a database that never had it is left as it is.
-- PRICE: a sweeper two releases old cannot claim (a rolling restart must not skip a release, as the rule says).
-- Locks: the DROP takes an exclusive lock on the function only.

DROP FUNCTION IF EXISTS queen.timer_claim_v3(INT, INTERVAL, INT, BIGINT, BOOLEAN);
