-- A bridge group's encryption.queues, as SQL LIKE patterns (queen.bridge_sealed_queues, V004): written by the bridge at start, before
-- it consumes, read by the fire (R__timer_fire.sql, step 6) so a clear payload never enters a queue
-- those patterns seal. An empty list removes the group's row (nothing sealed by its patterns any more).
-- Per tenant: the fire applies a group's patterns to the queues of the tenants the owner bound the group's command
-- topics to (queen.bridge_topics), never to another tenant's, so a login that sets '%' on its own group seals its own
-- tenants' queues only.
-- Lock order: the group's row only. PRICE: one statement per bridge start.
CREATE OR REPLACE FUNCTION queen.bridge_sealed_queues_set_v1(p_group TEXT, p_patterns TEXT[])
RETURNS VOID
LANGUAGE sql
VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
SELECT queen.bridge_group_login_v1(p_group); -- only the group's own login changes its patterns
DELETE FROM queen.bridge_sealed_queues WHERE group_id = p_group AND cardinality(coalesce(p_patterns, '{}')) = 0;
INSERT INTO queen.bridge_sealed_queues (group_id, patterns)
SELECT p_group, p_patterns WHERE cardinality(coalesce(p_patterns, '{}')) > 0
ON CONFLICT (group_id) DO UPDATE SET patterns = EXCLUDED.patterns, updated_at = now();
$$;
