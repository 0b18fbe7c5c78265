-- Sets one partition's stored offset on purpose and writes its offset_moved audit event, in one
-- transaction (V040). Returns the offset it replaced, NULL when none was stored.
SELECT queen.bridge_offset_set_v1(?, ?, ?, ?, ?, ?)
