-- A new group's first offset in a partition holding records (bridge.start.position), stored and audited
-- unless another instance stored one first; returns the stored offset.
SELECT queen.bridge_offset_start_v1(?, ?, ?, ?, ?, ?, ?, ?::uuid) AS next_offset
