-- Moving a bridge group's stored offset on purpose, and only on purpose, with an audit event
-- (`queen-timers offsets set`), and a new group's first offset (bridge.start.position).
--
-- Guarantees: the bridge never lets Kafka reset a position (auto.offset.reset=none); an out-of-range
-- stored offset stops that partition until an operator decides where it resumes. bridge_offset_set_v2
-- writes the new offset and an `offset_moved` audit event (who, why, from, to) in ONE transaction, so no
-- offset moves without its record. A running bridge needs no signal: its next batch on that partition
-- fails bridge_apply_v4's check-and-set, rolls back and seeks to the stored offsets, which is where the
-- operator put it.
--
-- Enforced here, so that no client can skip it:
-- * A stored offset is not moved backwards unless p_replay: every record in [to, from) is applied again,
--   and the rows of timers that already fired or were cancelled are gone, so each replayed schedule is
--   staged and fires a second time.
-- * The actor is the database's: session_user and inet_client_addr() ('local' over a Unix socket). The
--   client's own label (user@host) is kept as clientLabel, a claim, not the record.
-- * The event goes to the tenant that owns the topic: the one the group's bridges registered
--   (queen.bridge_topics). p_tenant, when given, must agree with it; an unregistered topic needs it.
--
-- Lock order: the offsets row first (FOR UPDATE, to read the offset it replaces), then the outbox
-- (insert only: it waits on nobody). bridge_apply_v4 takes timer rows, the outbox, then offsets; the two
-- share only the offsets row, so they cannot deadlock. queen.bridge_topics is read without a lock.
-- PRICE: none on the hot path (an operator's call, and one call per new partition of a group).

-- The tenant an offset event of (group, topic) belongs to; raises when it cannot be known or p_tenant disagrees.
CREATE OR REPLACE FUNCTION queen.bridge_topic_tenant_v1(p_group TEXT, p_topic TEXT, p_tenant UUID)
RETURNS UUID
LANGUAGE plpgsql STABLE AS $$
DECLARE
    registered UUID;
BEGIN
    SELECT tenant_id INTO registered FROM queen.bridge_topics WHERE group_id = p_group AND topic = p_topic;
    IF registered IS NULL AND p_tenant IS NULL THEN
        RAISE EXCEPTION 'topic % is not registered by a bridge of group % (a bridge registers its topics at start): name the tenant that owns it (--tenant UUID)',
            p_topic, p_group USING ERRCODE = '22023';
    END IF;
    IF registered IS NOT NULL AND p_tenant IS NOT NULL AND registered <> p_tenant THEN
        RAISE EXCEPTION 'topic % of group % belongs to tenant % (registered by its bridges), not %', p_topic, p_group, registered, p_tenant
            USING ERRCODE = '22023';
    END IF;
    RETURN coalesce(registered, p_tenant);
END
$$;

-- Who the database says is calling: the login role and the client's address.
CREATE OR REPLACE FUNCTION queen.session_actor_v1()
RETURNS TEXT
LANGUAGE sql STABLE AS $$
    SELECT session_user || '@' || coalesce(host(inet_client_addr()), 'local')
$$;

-- Returns the offset it replaced (previous_offset, NULL: none was stored) and the tenant the event went to.
CREATE OR REPLACE FUNCTION queen.bridge_offset_set_v2(p_group TEXT, p_topic TEXT, p_partition INT, p_offset BIGINT,
                                                      p_reason TEXT, p_replay BOOLEAN, p_tenant UUID, p_client_label TEXT)
RETURNS TABLE (previous_offset BIGINT, tenant_id UUID)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
DECLARE
    previous BIGINT;
    tenant UUID;
BEGIN
    IF p_reason IS NULL OR btrim(p_reason) = '' THEN
        RAISE EXCEPTION 'an offset is moved with a reason' USING ERRCODE = '22023';
    END IF;
    IF p_offset IS NULL OR p_offset < 0 OR p_partition IS NULL OR p_partition < 0 THEN
        RAISE EXCEPTION 'offset and partition must be >= 0' USING ERRCODE = '22023';
    END IF;
    tenant := queen.bridge_topic_tenant_v1(p_group, p_topic, p_tenant);
    SELECT o.next_offset INTO previous FROM queen.bridge_offsets o
     WHERE o.group_id = p_group AND o.topic = p_topic AND o."partition" = p_partition
       FOR UPDATE;
    IF previous IS NOT NULL AND p_offset < previous AND NOT coalesce(p_replay, FALSE) THEN
        RAISE EXCEPTION 'refused: %/% of group % is live at offset %; moving it back to % replays offsets [%, %) (up to % records): every schedule among them whose timer already fired or was cancelled is staged again and fires a second time. To do that on purpose, add --replay',
            p_topic, p_partition, p_group, previous, p_offset, p_offset, previous, previous - p_offset
            USING ERRCODE = '55000';
    END IF;
    INSERT INTO queen.bridge_offsets (group_id, topic, "partition", next_offset)
    VALUES (p_group, p_topic, p_partition, p_offset)
    ON CONFLICT (group_id, topic, "partition") DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = now();
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    VALUES (tenant, p_topic || '/' || p_partition, 'offset_moved',
            jsonb_build_object('group', p_group, 'topic', p_topic, 'partition', p_partition,
                               'from', previous, 'to', p_offset, 'reason', p_reason,
                               'replay', previous IS NOT NULL AND p_offset < previous,
                               'by', queen.session_actor_v1(), 'clientLabel', p_client_label));
    RETURN QUERY SELECT previous, tenant;
END
$$;

-- A group's first offset in a partition: p_position 'empty' (the partition holds no record: its log start,
-- nothing to decide), or for one that holds records, bridge.start.position: 'earliest' (the log start) or
-- 'latest' (the log end). Stored, so a restart before the first batch does not choose again (records that
-- came in between would then need the setting, or be skipped by a later log end). 'latest' passes records over
-- without a verdict, so it writes an offset_moved event (from NULL) to the topic's tenant; 'earliest' gives each
-- record its own verdict event and writes none (the audit client does not parse offset_moved yet). Another instance that stored one
-- first wins: returns the stored offset either way.
CREATE OR REPLACE FUNCTION queen.bridge_offset_start_v1(p_group TEXT, p_topic TEXT, p_partition INT, p_offset BIGINT,
                                                        p_position TEXT, p_log_start BIGINT, p_log_end BIGINT, p_tenant UUID)
RETURNS BIGINT
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
DECLARE
    stored BIGINT;
BEGIN
    PERFORM queen.bridge_group_login_v1(p_group); -- only the group's own login stores its offsets
    -- only a topic the owner bound to the group, and its tenant from that binding: p_tenant, given, must agree
    PERFORM queen.bridge_require_topics_v1('bridge_offset_start_v1', p_group, ARRAY[p_topic]);
    IF p_tenant IS NOT NULL THEN
        PERFORM queen.bridge_require_tenants_v1('bridge_offset_start_v1', p_group, ARRAY[p_tenant]);
        PERFORM queen.bridge_topic_tenant_v1(p_group, p_topic, p_tenant);
    END IF;
    IF p_position IS NULL OR p_position NOT IN ('earliest', 'latest', 'empty') THEN
        RAISE EXCEPTION 'start position must be earliest, latest or empty, not %', p_position USING ERRCODE = '22023';
    END IF;
    INSERT INTO queen.bridge_offsets (group_id, topic, "partition", next_offset)
    VALUES (p_group, p_topic, p_partition, p_offset)
    ON CONFLICT (group_id, topic, "partition") DO NOTHING;
    IF NOT FOUND THEN
        SELECT o.next_offset INTO stored FROM queen.bridge_offsets o
         WHERE o.group_id = p_group AND o.topic = p_topic AND o."partition" = p_partition;
        RETURN stored;
    END IF;
    IF p_position <> 'latest' THEN
        RETURN p_offset; -- every record from the log start gets its own verdict event: nothing is passed over
    END IF;
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    VALUES (queen.bridge_topic_tenant_v1(p_group, p_topic, p_tenant), p_topic || '/' || p_partition, 'offset_moved',
            jsonb_build_object('group', p_group, 'topic', p_topic, 'partition', p_partition,
                               'from', NULL, 'to', p_offset, 'replay', FALSE,
                               'reason', 'bridge.start.position=latest: a new group starts at the log end of a partition holding offsets ['
                                         || p_log_start || ', ' || p_log_end || '); those records get no verdict',
                               'by', queen.session_actor_v1()));
    RETURN p_offset;
END
$$;
