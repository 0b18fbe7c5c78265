-- Where the group stands in the given partitions (read at assignment; no lock: the check-and-set
-- of bridge_apply_v4 catches a value that changes after this read).
SELECT topic, "partition", next_offset FROM queen.bridge_offsets WHERE group_id = ? AND topic = ANY(?)
