-- V126  The bridge's encryption.queues, where the fire can read them.
--
-- A queue is encrypted when queen.queues.encryption_enabled says so OR when it matches the bridge's
-- encryption.queues patterns (a queue is born at the fire, so before it exists only a pattern can say it
-- must be sealed). The fire (R__timer_fire.sql, step 6) refuses to push a clear payload into an encrypted
-- queue; it could read the flag but not the patterns, which lived in the bridge's configuration only. So a
-- timer staged clear before its queue was added to encryption.queues fired in clear.
--
-- Each bridge group writes its patterns here at start (queen.bridge_sealed_queues_set_v1,
-- R__bridge_sealed_queues.sql), as SQL LIKE patterns, before it consumes a record; the fire refuses clear
-- rows whose queue matches any group's pattern.
--
-- PRICE: one more read per fire of a table with one row per bridge group (a sequential scan of a page);
-- a queue whose pattern is removed keeps being refused until the bridge of that group restarts with
-- its new configuration (a group retired for good keeps its row: DELETE it by hand, README "Payload
-- encryption"). A pattern added while a fire runs is seen by fires that start after the bridge wrote it.

CREATE TABLE IF NOT EXISTS queen.bridge_sealed_queues (
    group_id   TEXT        PRIMARY KEY,
    patterns   TEXT[]      NOT NULL,     -- SQL LIKE patterns ('%' for the setting's '*'), never empty
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
