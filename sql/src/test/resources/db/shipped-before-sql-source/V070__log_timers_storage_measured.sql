-- V070  queen.log_timers: the storage settings of V025, measured.
--
-- V025 set four storage numbers, each with a NOT MEASURED block, to be replaced after the first soak
-- on a test rig (never from a live stack). This file is that replacement: one dated block per number
-- (date, question, rig and load, number observed, decision). V025 itself stays as applied (Flyway
-- checksums); what changes, changes here. The comment on the table points a reader of the catalog here.
--
-- Rig and load, for every block below: the soak rig (module soak/, README "Soak rig"), 2026-12-03
-- 04:12-04:57 UTC, `soak/run --seconds 240 --rate 300 --max-delay-seconds 150` over ten variants, each on
-- a fresh database after a CHECKPOINT. PostgreSQL 17.11, durable (fsync, synchronous_commit,
-- full_page_writes on), every server setting at PostgreSQL's default (autovacuum_naptime 1 min,
-- shared_buffers 128 MB); 1 bridge + 1 sweeper JVM from the launcher jar, a Kafka broker JVM. Load: 300
-- commands/s (81 % schedules, 9 % reschedules, 9 % cancels, 1 % poisoned), delays 1-150 s, ~21,000
-- timers pending in the second half, ~200 updates/s and ~235 fires/s on the table. A SHORTENED run (4
-- minutes per variant instead of 20) on a 2-core machine shared with four other engineers' builds:
-- load average 13-33 during the run, recorded in every sample. Latencies from this run are the
-- machine's, not the settings' (they follow the load average); sizes, tuple counts and vacuum counts
-- are the settings'. Report: soak/results/2026-12-03/ (summary.md, samples.csv, plots).
--
-- fillfactor: 90 -> 100. Measured 2026-12-03.
--   Question: does free space per page buy HOT updates on this table (V025: "90 leaves room for the
--   few that are")?
--   Observed: 0 HOT updates of ~48,000 updates per variant, at fillfactor 70, 90 and 100 alike
--   (n_tup_hot_upd = 0 in every sample): the claim, the fail, the release and every reschedule write
--   visible_at, which is indexed, so no update here can be HOT. The free space only made the heap
--   bigger for the same ~21,000 live rows: 19.9 MB at 70, 14.6 MB at 90, 13.5 MB at 100 (end of run).
--   WAL per fired timer did not get worse without the free space: 3,212 B at 70, 3,338 B at 90,
--   3,045 B at 100 (within this machine's noise).
--   Decision: 100 (PostgreSQL's default for tables). A page's free space is refilled by inserts after
--   vacuum anyway; the reason given for 90 is measured absent. New pages fill to 100 %; existing pages
--   are not rewritten (no VACUUM FULL needed: the table churns completely within its longest delay).
--
-- autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000: kept. Measured 2026-12-03.
--   Question: does vacuum come before dead index entries pile up at the head of (shard, visible_at)?
--   Observed: dead tuples grow ~580/s under this load (each fire deletes a row whose claim already left
--   a dead version) and every variant got one autovacuum of the table per minute — 4 in 240 s at
--   0.02/1000 (baseline), 4 at PostgreSQL's 0.2/50 ("av-pgdefault"), 3 at 0.005/500 ("av-eager") —
--   each dropping n_dead_tup from ~29,000 (1.4x the live rows) to ~2,000. Mean dead tuples over the
--   steady half: 15,070 / 15,485 / 15,113. Any of the three thresholds (1,420 / 4,250 / 605 dead at
--   ~21,000 live) is crossed seconds after a vacuum; what sets the rhythm is autovacuum_naptime (1 min,
--   server-wide), not this table's numbers. Claim calls read 0.5-6.9 index entries per scan, with no
--   trend against dead tuples that this machine's noise lets one read (claim_vs_dead_tuples.png).
--   Decision: keep 0.02 / 1000. They cost nothing at this rate and are what starts vacuum early at low
--   rates (at 10 dead tuples/s the table is due after ~2.5 min instead of ~7 min at PostgreSQL's
--   defaults); that low-rate case was not run here. An operator who sees n_dead_tup of this table go
--   well past its live rows lowers autovacuum_naptime (server-wide), not these.
--   Open: idx_log_timers_visible grew about linearly to 2.4-2.9 MB in every variant, also after the
--   live set levelled off at ~21,000 rows; whether it levels off (B-tree pages emptied by one vacuum
--   are recycled by a later one) needs a run longer than 4 minutes. Not a reason to change these.
--
-- autovacuum_vacuum_insert_scale_factor = 0.05: kept. Measured 2026-12-03.
--   Question: does the insert-driven vacuum keep the visibility map fresh for bursts of schedules?
--   Observed: not separable on this table. Every row is updated (claim) and deleted (fire or cancel)
--   within its delay, so every autovacuum of the run was already due by the dead-tuple threshold above;
--   the counts were the same with 0.05, 0.2 and 0.01.
--   Decision: keep 0.05; it only matters for a burst of schedules far in the future with nothing
--   firing, which the rig did not run.
--
-- vacuum_truncate = off: not a number (V025 says why), unchanged.

ALTER TABLE queen.log_timers SET (fillfactor = 100);

COMMENT ON TABLE queen.log_timers IS
    'Timers waiting to become messages (V025). Storage settings measured 2026-12-03 by the soak rig: '
    'fillfactor 100 (no update here can be HOT), autovacuum scale 0.02 / threshold 1000 / insert scale '
    '0.05 kept; see the header of V070__log_timers_storage_measured.sql and soak/results/2026-12-03/.';
