-- Writes a folded batch: the offsets, the timers to upsert and to delete, the outbox events -- each a jsonb array of named rows (JsonRows). Returns the fenced partition count.
SELECT queen.bridge_apply_v4(?, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, ?::interval) AS fenced
