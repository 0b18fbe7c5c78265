-- V121  Retire the superseded functions nothing calls any more
-- (docs/decisions.md#a-superseded-function-is-dropped-one-release-after-nothing-calls-it).
--
-- The rule: a function replaced by a new version stays while a process of the previous release may
-- still call it during a rolling restart, and is dropped by the first release whose previous release
-- no longer calls it. The release before this one (main at 9466e1f, as at 1408545) calls bridge_apply_v4,
-- timer_claim_v3 and timer_fire_v2, so the versions below have had no caller for a release:
--   bridge_apply_v1 (V028), v2 (V055), v3 (V090)   positional parallel arrays; v1 stores every payload
--                                                 as clear (encrypted = FALSE), whatever the queue says
--   timer_claim_v1 (V031), v2 (V050)              no byte bound, no trace context
--   timer_fire_v1 (V033, V056, V090)              parallel arrays
--   timer_fail_v1, timer_release_v1 (V034, V056, V090), timer_dead_letter_v1 (V035, V056, V090)
--                                                 parallel arrays; the previous release's sweeper called
--                                                 them only through their v2 (V102), whose bodies now do
--                                                 the work themselves (db/current/R__timer_fail.sql,
--                                                 R__timer_dead_letter.sql)
-- SqlFunctionsInUseTest fails on any function of the queen schema that no code calls and no reasoned
-- keep-list names, so a new superseded version cannot stay behind unnoticed.
--
-- IF EXISTS: a database installed after issue 26 never had them (their definitions left the versioned
-- migrations). The v2 that called the v1 are replaced by the R__ files in the same transaction as this
-- file (Migrations applies pending migrations as one group), so no process ever sees a v2 without its
-- v1. Locks: each DROP takes an exclusive lock on its function only.
-- PRICE: a process older than the previous release can no longer run beside this one.

DROP FUNCTION IF EXISTS queen.bridge_apply_v1(
    TEXT, TEXT[], INT[], BIGINT[], BIGINT[],
    UUID[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT[], UUID[], BYTEA[], BOOLEAN[], TEXT[],
    UUID[], TEXT[], TEXT[],
    UUID[], TEXT[], TEXT[], TEXT[],
    INTERVAL);
DROP FUNCTION IF EXISTS queen.bridge_apply_v2(
    TEXT, TEXT[], INT[], BIGINT[], BIGINT[],
    UUID[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT[], UUID[], BYTEA[], BOOLEAN[], BOOLEAN[], TEXT[],
    UUID[], TEXT[], TEXT[],
    UUID[], TEXT[], TEXT[], TEXT[],
    INTERVAL);
DROP FUNCTION IF EXISTS queen.bridge_apply_v3(
    TEXT, TEXT[], INT[], BIGINT[], BIGINT[],
    UUID[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT[], UUID[], BYTEA[], BOOLEAN[], BOOLEAN[], TEXT[], BYTEA[],
    UUID[], TEXT[], TEXT[],
    UUID[], TEXT[], TEXT[], TEXT[],
    INTERVAL);
DROP FUNCTION IF EXISTS queen.timer_claim_v1(INT, INTERVAL, INT);
DROP FUNCTION IF EXISTS queen.timer_claim_v2(INT, INTERVAL, INT, BIGINT, BOOLEAN);
DROP FUNCTION IF EXISTS queen.timer_fire_v1(UUID[], TEXT[], TEXT[], INT[], BYTEA, INT[], BYTEA, INT[], TEXT[], UUID[]);
DROP FUNCTION IF EXISTS queen.timer_fail_v1(UUID[], TEXT[], TEXT[], UUID[], TEXT, BOOLEAN, INTERVAL, INTERVAL, INTERVAL, INT);
DROP FUNCTION IF EXISTS queen.timer_release_v1(UUID[], TEXT[], TEXT[], UUID[]);
DROP FUNCTION IF EXISTS queen.timer_dead_letter_v1(UUID[], TEXT[], TEXT[], BYTEA[], INT);
