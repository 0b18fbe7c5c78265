-- Moving a bridge group's stored offset on purpose, and only on purpose, with an audit event
-- (`queen-timers offsets set`).
--
-- Guarantees: the bridge never lets Kafka reset a position (auto.offset.reset=none); an out-of-range
-- stored offset stops that partition until an operator decides where it resumes. This function writes
-- the new offset and an `offset_moved` audit event (who, why, from, to) in ONE transaction, so no offset
-- moves without its record. A running bridge needs no signal: its next batch on that partition fails
-- bridge_apply_v4's check-and-set, rolls back and seeks to the stored offsets, which is where the
-- operator put it.
--
-- Lock order: the offsets row first (FOR UPDATE, to read the offset it replaces), then the outbox
-- (insert only: it waits on nobody). bridge_apply_v4 takes timer rows, the outbox, then offsets; the two
-- share only the offsets row, so they cannot deadlock.
--
-- The event goes to the default tenant's audit stream: which tenant a topic stands for is the bridge's
-- configuration, which the database does not know. PRICE: none on the hot path (an operator's call).

-- Returns the offset it replaced (NULL: none was stored).
CREATE OR REPLACE FUNCTION queen.bridge_offset_set_v1(p_group TEXT, p_topic TEXT, p_partition INT, p_offset BIGINT,
                                                      p_reason TEXT, p_actor TEXT)
RETURNS BIGINT
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
DECLARE
    previous BIGINT;
BEGIN
    IF p_reason IS NULL OR btrim(p_reason) = '' THEN
        RAISE EXCEPTION 'an offset is moved with a reason' USING ERRCODE = '22023';
    END IF;
    SELECT next_offset INTO previous FROM queen.bridge_offsets
     WHERE group_id = p_group AND topic = p_topic AND "partition" = p_partition
       FOR UPDATE;
    INSERT INTO queen.bridge_offsets (group_id, topic, "partition", next_offset)
    VALUES (p_group, p_topic, p_partition, p_offset)
    ON CONFLICT (group_id, topic, "partition") DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = now();
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    VALUES ('00000000-0000-0000-0000-000000000001', p_topic || '/' || p_partition, 'offset_moved',
            jsonb_build_object('group', p_group, 'topic', p_topic, 'partition', p_partition,
                               'from', previous, 'to', p_offset, 'reason', p_reason, 'by', p_actor));
    RETURN previous;
END
$$;
