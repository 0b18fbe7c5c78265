-- Writes a folded batch: timers (with the encrypted flag, V055, and the trace context, V090), then outbox, then offsets (V028). Returns the fenced partition count.
SELECT queen.bridge_apply_v3(?, ?, ?, ?, ?,  ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,  ?, ?, ?,  ?, ?, ?, ?,  ?::interval)
