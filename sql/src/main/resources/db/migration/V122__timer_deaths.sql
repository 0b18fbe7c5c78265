-- V122  A death narrows the suspicion; only a death alone spends an attempt.
--
-- V120 counted every lease that ran out in a sweeper's hands as one attempt. The fault harness showed the
-- price was not the one stated: a lease also runs out when its sweeper is paused past it or loses the
-- database mid-fire, and every timer it held then spent an attempt. Under a run of such faults healthy
-- timers reached sweeper.max.attempts and were dead-lettered (22 of 5,862 in one CI run, 2026-12-04) --
-- the promise broken by the environment, not by the timers.
--
-- 1. queen.log_timers.deaths: how many leases of this row ran out in a sweeper's hands since it was last
--    (re)scheduled. The sweeper fires a suspect (deaths > 0) in a group of 16, 4, then 1 by its deaths,
--    holding the process for that group alone; a death there narrows the group and spends nothing.
-- 2. queen.log_timers.held_alone: set by the sweeper (timer_hold_alone_v1) on a suspect it is about to fire
--    alone, with nothing else of the process in hand. A lease that runs out with held_alone set is a
--    death this timer can be blamed for: the claim counts it as one attempt. So a timer that kills its
--    process is dead-lettered after 3 deaths that narrow it down and sweeper.max.attempts deaths alone;
--    an innocent one spends an attempt only if its own lone fire (one statement, milliseconds) is the
--    moment its sweeper is killed, paused past the lease or cut from the database.
-- Both are reset by a (re)schedule, like attempts.
--
-- PRICE: 3 bytes per staged row beside the contracted columns (not indexed). ADD COLUMN with a constant
-- default is a catalog change only (PostgreSQL 11+): no rewrite of a table holding a million timers. A
-- timer that kills its process costs max.attempts + 3 deaths (8 by default) before its dead-letter, each a
-- restart of its sweeper and a lease. One more statement per suspect fired alone (never on the path of a
-- timer that was never in a death).
--
-- The functions that read and write them (queen.timer_claim_v4, queen.timer_hold_alone_v1,
-- queen.bridge_apply_v4) live in db/current/R__timer_claim.sql, R__timer_fail.sql and R__bridge_apply.sql.

ALTER TABLE queen.log_timers
    ADD COLUMN IF NOT EXISTS deaths     SMALLINT NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS held_alone BOOLEAN  NOT NULL DEFAULT FALSE;
