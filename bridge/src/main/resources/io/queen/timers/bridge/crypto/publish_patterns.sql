-- This bridge group's encryption.queues as LIKE patterns, where the fire reads them (queen.bridge_sealed_queues).
SELECT queen.bridge_sealed_queues_set_v1(?, ?::text[])
