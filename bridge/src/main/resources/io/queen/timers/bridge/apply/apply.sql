-- Writes a folded batch: timers (with the encrypted flag, V055), then outbox, then offsets (V028). Returns the fenced partition count.
SELECT queen.bridge_apply_v2(?, ?, ?, ?, ?,  ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,  ?, ?, ?,  ?, ?, ?, ?,  ?::interval)
