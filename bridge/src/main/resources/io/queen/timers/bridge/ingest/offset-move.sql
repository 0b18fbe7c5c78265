-- Sets one partition's stored offset on purpose and writes its offset_moved audit event to the topic's
-- tenant, in one transaction; refuses a backward move of a stored offset unless asked to replay.
-- Returns the offset it replaced (NULL when none was stored) and the tenant.
SELECT previous_offset, tenant_id FROM queen.bridge_offset_set_v2(?, ?, ?, ?, ?, ?, ?::uuid, ?)
