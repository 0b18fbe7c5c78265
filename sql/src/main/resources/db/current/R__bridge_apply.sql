-- The bridge's two statements per poll batch: lock the batch's timers, then write their final state.
--
-- Guarantees:
--  * One round trip to lock and one to write, whatever the batch size: a statement per command would
--    pay a round trip and a plan each. The fold (schedule, cancel, schedule -> scheduled, cancelled,
--    scheduled) is done in Java, in Kafka order, from the state bridge_lock_v2 returns; bridge_apply_v4
--    writes only each timer's final state: one upsert or one delete per timer.
--  * "In somebody's hands" has one definition: claim_token IS NOT NULL AND claimed_until > now(),
--    PostgreSQL's clock. A row in backoff (token NULL, claimed_until in the future) is cancellable.
--  * `encrypted` is stored as the bridge decided it (a queue with queen.queues.encryption_enabled, or
--    matching encryption.queues, gets its payload sealed before it reaches this function); the fire
--    copies the column into frame flag 4 and never decrypts.
--  * payload_bytes is stored as the bridge gives it (the payload's length before compression, or the
--    sealed envelope's): the claim bounds a cycle by it. The key is read when present and not required:
--    a row without it stages NULL, which the claim counts by the stored bytes.
--  * A back-dated timer is ordered no earlier than its staging (docs/decisions.md#claim-order-and-fairness): visible_at =
--    greatest(deliver_at, now()) at staging and at every reschedule, so a flood of timers back-dated to
--    1970 sorts after the due timers other tenants staged before it. How: a timer due before now() is
--    staged with claimed_until = now() and no claim_token, which the generated visible_at already reads
--    as "not before" (the contract's expression, unchanged); without a token it is not in
--    anybody's hands and cancellable, and timer_state_v1 calls it `due`. deliver_at stays what the
--    producer said: the fired event's lateMs counts from it, and the fire is never earlier than it.
--  * A recurring timer's row carries its rule (recurrence; the key is read when present: a row without
--    it is a one-shot timer); a reschedule replaces it, NULL included.
--  * Offsets: check-and-set against the offset the bridge sought to; a mismatch returns the number of
--    partitions that did not advance and the caller rolls the whole batch back.
--  * Rows with named fields (jsonb, checked by queen.json_rows_v1), not parallel arrays:
--    docs/decisions.md#rows-not-parallel-arrays. The lock keeps its three key arrays: the primary key,
--    nothing to confuse, on the ingest's hot path, where a jsonb version cost measurably more per batch
--    (the figures are in that section).
--
-- Lock order: queen.log_timers rows first, in (tenant_id, queue, timer_key) ascending with the table's
-- "C" collation (bridge_lock_v2 sorts the keys, then locks each row as its key comes; the upsert
-- inserts in the same order), then the leaves: queen.timer_audit_outbox (insert only) and
-- queen.bridge_offsets (last). queen.queues and queen.log_partitions are never touched: the queue is
-- born at the fire (docs/decisions.md#the-queue-is-born-at-the-fire). The lock is a plain FOR UPDATE,
-- so the bridge waits for a row a fire or a claim holds for a moment; the sweeper never waits on the
-- bridge (it claims and verifies with SKIP LOCKED).
--
-- PRICE:
--  * jsonb: the server parses every batch's rows, slower per batch than positional arrays were, most of
--    it jsonb's parse; a composite array was no faster and needs a hand-written encoder
--    (docs/decisions.md#rows-not-parallel-arrays has the figures).
--  * The lock probes the primary key once per key of the batch (a LATERAL lookup), also for keys not
--    staged; enable_seqscan = off on both functions, because VACUUM of a near-empty table leaves
--    reltuples = 0 and the planner then turned the lock into a semi join that read the whole key per
--    call, several times slower for a fresh deployment's first flood of future schedules
--    (docs/decisions.md#plans-do-not-depend-on-statistics, KeyLookupPlanIT).

-- bridge_lock_v2 locks in two statements. The first locks every staged key of the batch, waiting for a
-- fire that holds one. A fire of a recurring timer deletes the row and inserts its successor under the same
-- key (R__timer_cadence.sql): the first statement, whose snapshot predates that commit, finds the row gone
-- and cannot see the successor, and the batch would answer `absent` to a cancel while the series goes on.
-- So the keys the first statement did not return are locked again by a second statement, with a snapshot
-- taken after any wait. PRICE: one more primary-key probe per key not staged (new keys, mostly); keys
-- found are not probed twice.
-- bridge_lock_v2: the lock, with each staged row's producer_sub, the timer's owner the
-- fold checks a command from a jwt topic against (docs/security.md#producer-identity). Two statements, in the lock order
-- and at the price above.
CREATE OR REPLACE FUNCTION queen.bridge_lock_v2(p_tenant UUID[], p_queue TEXT[], p_key TEXT[])
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, message_id UUID, in_hands BOOLEAN, producer_sub TEXT)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
    f_tenant UUID[];
    f_queue  TEXT[];
    f_key    TEXT[];
    f_msg    UUID[];
    f_hands  BOOLEAN[];
    f_sub    TEXT[];
    m_tenant UUID[];
    m_queue  TEXT[];
    m_key    TEXT[];
BEGIN
    -- only the tenants of the login's own groups: another tenant's rows are neither returned nor locked
    PERFORM queen.bridge_require_tenants_v1('bridge_lock_v2', NULL, p_tenant);
    SELECT coalesce(array_agg(t.tenant_id ORDER BY t.tenant_id, t.queue, t.timer_key), '{}'),
           coalesce(array_agg(t.queue ORDER BY t.tenant_id, t.queue, t.timer_key), '{}'),
           coalesce(array_agg(t.timer_key ORDER BY t.tenant_id, t.queue, t.timer_key), '{}'),
           coalesce(array_agg(t.message_id ORDER BY t.tenant_id, t.queue, t.timer_key), '{}'),
           coalesce(array_agg(t.in_hands ORDER BY t.tenant_id, t.queue, t.timer_key), '{}'),
           coalesce(array_agg(t.producer_sub ORDER BY t.tenant_id, t.queue, t.timer_key), '{}')
      INTO f_tenant, f_queue, f_key, f_msg, f_hands, f_sub
      FROM queen.bridge_lock_keys_v2(p_tenant, p_queue, p_key) t;
    IF cardinality(f_key) < (SELECT count(DISTINCT (k.tenant_id, k.queue, k.timer_key))
                               FROM unnest(p_tenant, p_queue, p_key) AS k(tenant_id, queue, timer_key)) THEN
        SELECT array_agg(k.tenant_id), array_agg(k.queue), array_agg(k.timer_key)
          INTO m_tenant, m_queue, m_key
          FROM (SELECT DISTINCT k.tenant_id, k.queue, k.timer_key
                  FROM unnest(p_tenant, p_queue, p_key) AS k(tenant_id, queue, timer_key)
                EXCEPT
                SELECT f.tenant_id, f.queue, f.timer_key FROM unnest(f_tenant, f_queue, f_key) AS f(tenant_id, queue, timer_key)) k;
    END IF;
    RETURN QUERY
        SELECT x.tenant_id, x.queue, x.timer_key, x.message_id, x.in_hands, x.producer_sub
          FROM (SELECT f.* FROM unnest(f_tenant, f_queue, f_key, f_msg, f_hands, f_sub)
                                AS f(tenant_id, queue, timer_key, message_id, in_hands, producer_sub)
                UNION ALL
                SELECT m.* FROM queen.bridge_lock_keys_v2(m_tenant, m_queue, m_key) m WHERE m_key IS NOT NULL) x
         ORDER BY x.tenant_id, x.queue COLLATE "C", x.timer_key COLLATE "C";
END
$$;

-- One statement of bridge_lock_v2: the staged rows of the keys, locked FOR UPDATE in key order (each probe a
-- LATERAL primary-key lookup), with whether each is in a sweeper's hands and its owner (producer_sub).
CREATE OR REPLACE FUNCTION queen.bridge_lock_keys_v2(p_tenant UUID[], p_queue TEXT[], p_key TEXT[])
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, message_id UUID, in_hands BOOLEAN, producer_sub TEXT)
LANGUAGE sql VOLATILE
SET enable_seqscan = off
AS $$
    SELECT t.tenant_id, t.queue, t.timer_key, t.message_id,
           (t.claim_token IS NOT NULL AND t.claimed_until > now()), t.producer_sub
      FROM (SELECT DISTINCT k.tenant_id, k.queue COLLATE "C" AS queue, k.timer_key COLLATE "C" AS timer_key
              FROM unnest(p_tenant, p_queue, p_key) AS k(tenant_id, queue, timer_key)
             ORDER BY 1, 2, 3) k
     CROSS JOIN LATERAL (
            SELECT r.tenant_id, r.queue, r.timer_key, r.message_id, r.claim_token, r.claimed_until, r.producer_sub
              FROM queen.log_timers r
             WHERE r.tenant_id = k.tenant_id AND r.queue = k.queue AND r.timer_key = k.timer_key
               FOR UPDATE) t
     ORDER BY t.tenant_id, t.queue, t.timer_key
$$;

CREATE OR REPLACE FUNCTION queen.bridge_apply_v4(
    p_group       TEXT,
    p_offsets     JSONB,
    p_upserts     JSONB,
    p_deletes     JSONB,
    p_events      JSONB,
    p_wake_within INTERVAL)
RETURNS INT
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
SET enable_seqscan = off  -- the DELETE joins the batch's keys to the table; probe them by key (see the header)
AS $$
DECLARE
    v_offsets  INT;
    v_advanced INT := 0;
    n          INT;
BEGIN
    PERFORM queen.bridge_group_login_v1(p_group); -- only the group's own login moves its offsets
    p_offsets := queen.json_rows_v1('bridge_apply_v4 offsets', p_offsets, '{topic,partition,expected,next}');
    p_upserts := queen.json_rows_v1('bridge_apply_v4 upserts', p_upserts,
                     '{tenant_id,queue,timer_key,partition,deliver_at_ms,txn,message_id,payload,payload_zstd,encrypted,producer_sub,trace_context}');
    p_deletes := queen.json_rows_v1('bridge_apply_v4 deletes', p_deletes, '{tenant_id,queue,timer_key}');
    p_events  := queen.json_rows_v1('bridge_apply_v4 events', p_events, '{tenant_id,kafka_key,type,event}');
    v_offsets := jsonb_array_length(p_offsets);
    -- Every row's tenant is one of the group's, every offset's topic the group's: the owner's binding
    -- (bridge_group_bind_v1), never the rows themselves; a row naming another tenant refuses the whole call (42501),
    -- nothing written. A login that may write the tables itself is not held (bridge_require_tenants_v1): the check is
    -- skipped for it here, so that its batches do not pay for reading the rows' tenants.
    IF NOT has_table_privilege(session_user, 'queen.log_timers', 'INSERT') THEN
        PERFORM queen.bridge_require_tenants_v1('bridge_apply_v4', p_group, ARRAY(
            SELECT r.tenant_id FROM jsonb_to_recordset(p_upserts) AS r(tenant_id UUID)
            UNION SELECT r.tenant_id FROM jsonb_to_recordset(p_deletes) AS r(tenant_id UUID)
            UNION SELECT r.tenant_id FROM jsonb_to_recordset(p_events) AS r(tenant_id UUID)));
        PERFORM queen.bridge_require_topics_v1('bridge_apply_v4 offsets', p_group,
                                               ARRAY(SELECT x.topic FROM jsonb_to_recordset(p_offsets) AS x(topic TEXT)));
    END IF;

    -- 0. Ownership (docs/security.md#producer-identity): the bridge folds a jwt topic's commands
    --    against the owner bridge_lock_v2 returned and rejects another sub's (not_owner). A timer row it saw
    --    is locked since, so that view holds; a key it saw absent is not (FOR UPDATE locks no missing row),
    --    and another bridge may have staged it since. A row the bridge decided on an owner check carries
    --    owner_staged (did the key exist when locked) and owner_sub (its producer_sub then); when the table
    --    says otherwise now, the decision was made on a stale view, and the batch fails with 40001 (the
    --    bridge retries it from the stored offsets: its lock then sees the row and folds not_owner). Rows
    --    without these keys (no owner check decided them) are written as they are. PRICE: one
    --    primary-key probe per checked row, all of them on rows this transaction has locked or just missed.
    IF EXISTS (SELECT 1
                 FROM (SELECT w.tenant_id, w.queue, w.timer_key, w.owner_staged, w.owner_sub
                         FROM jsonb_to_recordset(p_upserts)
                              AS w(tenant_id UUID, queue TEXT, timer_key TEXT, owner_staged BOOLEAN, owner_sub TEXT)
                       UNION ALL
                       SELECT w.tenant_id, w.queue, w.timer_key, w.owner_staged, w.owner_sub
                         FROM jsonb_to_recordset(p_deletes)
                              AS w(tenant_id UUID, queue TEXT, timer_key TEXT, owner_staged BOOLEAN, owner_sub TEXT)) w
                 LEFT JOIN queen.log_timers t
                        ON t.tenant_id = w.tenant_id AND t.queue = w.queue AND t.timer_key = w.timer_key
                WHERE w.owner_staged IS NOT NULL
                  AND (w.owner_staged <> (t.timer_key IS NOT NULL)
                       OR (t.timer_key IS NOT NULL AND t.producer_sub IS DISTINCT FROM w.owner_sub))) THEN
        RAISE EXCEPTION 'bridge_apply_v4: a timer changed owner after the batch was folded (another bridge staged it); retry the batch'
              USING ERRCODE = '40001';
    END IF;

    -- 1. queen.log_timers: deletes of rows locked by bridge_lock_v2, then upserts in key order. A delete row
    --    with stop_series is a cancel that met the timer in a sweeper's hands (too_late): nothing is deleted,
    --    but a recurring timer's rule is marked stopped ("stopped": "cancelled"), so whichever claim fires it
    --    (this one, or a later one after a lost lease or a retry) stages no successor and its event says why
    --    (timer_series_next_v1, docs/recurring.md). The rule is kept, not dropped: a claim made after a drop
    --    would read a one-shot and write an event without the series fields.
    DELETE FROM queen.log_timers t
     USING jsonb_to_recordset(p_deletes) AS d(tenant_id UUID, queue TEXT, timer_key TEXT, stop_series BOOLEAN)
     WHERE t.tenant_id = d.tenant_id AND t.queue = d.queue AND t.timer_key = d.timer_key AND d.stop_series IS NOT TRUE;
    IF jsonb_path_exists(p_deletes, '$[*] ? (@.stop_series == true)') THEN
        UPDATE queen.log_timers t
           SET recurrence = t.recurrence || jsonb_build_object('stopped', 'cancelled'), updated_at = now()
          FROM jsonb_to_recordset(p_deletes) AS d(tenant_id UUID, queue TEXT, timer_key TEXT, stop_series BOOLEAN)
         WHERE t.tenant_id = d.tenant_id AND t.queue = d.queue AND t.timer_key = d.timer_key AND d.stop_series
           AND t.recurrence IS NOT NULL;
    END IF;

    INSERT INTO queen.log_timers AS t (tenant_id, queue, timer_key, "partition", deliver_at, txn, message_id,
                                       payload, payload_zstd, payload_bytes, encrypted, producer_sub, trace_context,
                                       claimed_until, recurrence)
    SELECT u.tenant_id, u.queue, u.timer_key, u."partition", timestamptz 'epoch' + u.deliver_at_ms * interval '1 millisecond',
           u.txn, u.message_id, decode(u.payload, 'base64'), u.payload_zstd, u.payload_bytes, u.encrypted, u.producer_sub,
           decode(u.trace_context, 'base64'),
           -- back-dated: not visible before its staging (visible_at = greatest(deliver_at, now())); no token
           CASE WHEN timestamptz 'epoch' + u.deliver_at_ms * interval '1 millisecond' < now() THEN now() END,
           u.recurrence
      FROM jsonb_to_recordset(p_upserts)
           AS u(tenant_id UUID, queue TEXT, timer_key TEXT, "partition" TEXT, deliver_at_ms BIGINT, txn TEXT,
                message_id UUID, payload TEXT, payload_zstd BOOLEAN, payload_bytes INT, encrypted BOOLEAN,
                producer_sub TEXT, trace_context TEXT, recurrence JSONB)
     ORDER BY u.tenant_id, u.queue COLLATE "C", u.timer_key COLLATE "C"
    ON CONFLICT (tenant_id, queue, timer_key) DO UPDATE
       SET "partition" = EXCLUDED."partition", deliver_at = EXCLUDED.deliver_at, txn = EXCLUDED.txn,
           message_id = EXCLUDED.message_id, payload = EXCLUDED.payload, payload_zstd = EXCLUDED.payload_zstd,
           payload_bytes = EXCLUDED.payload_bytes,
           encrypted = EXCLUDED.encrypted, producer_sub = EXCLUDED.producer_sub, trace_context = EXCLUDED.trace_context,
           recurrence = EXCLUDED.recurrence,  -- a reschedule replaces the rule (or makes the timer one-shot)
           attempts = 0, deaths = 0, held_alone = FALSE, last_error = NULL, claimed_until = EXCLUDED.claimed_until, claim_token = NULL,
           updated_at = now();

    -- 2. The outbox: one row per record, in Kafka order (ids follow the ORDER BY).
    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
    SELECT o.tenant_id, o.kafka_key, o.type, o.event
      FROM ROWS FROM (jsonb_to_recordset(p_events) AS (tenant_id UUID, kafka_key TEXT, type TEXT, event JSONB))
           WITH ORDINALITY AS o(tenant_id, kafka_key, type, event, i)
     ORDER BY o.i;

    -- 3. Offsets, last: check-and-set against the offset the bridge sought to.
    UPDATE queen.bridge_offsets b
       SET next_offset = x."next", updated_at = now()
      FROM jsonb_to_recordset(p_offsets) AS x(topic TEXT, "partition" INT, expected BIGINT, "next" BIGINT)
     WHERE b.group_id = p_group AND b.topic = x.topic AND b."partition" = x."partition"
       AND x.expected IS NOT NULL AND b.next_offset = x.expected;
    GET DIAGNOSTICS n = ROW_COUNT;
    v_advanced := v_advanced + n;

    INSERT INTO queen.bridge_offsets (group_id, topic, "partition", next_offset)
    SELECT p_group, x.topic, x."partition", x."next"
      FROM jsonb_to_recordset(p_offsets) AS x(topic TEXT, "partition" INT, expected BIGINT, "next" BIGINT)
     WHERE x.expected IS NULL
     ORDER BY x.topic, x."partition"
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS n = ROW_COUNT;
    v_advanced := v_advanced + n;

    IF v_advanced < v_offsets THEN
        RETURN v_offsets - v_advanced;
    END IF;

    -- 4. Wake the sweeper at commit when a timer is due within p_wake_within (PostgreSQL's clock).
    IF EXISTS (SELECT 1 FROM jsonb_to_recordset(p_upserts) AS u(deliver_at_ms BIGINT)
                WHERE timestamptz 'epoch' + u.deliver_at_ms * interval '1 millisecond' <= now() + p_wake_within) THEN
        PERFORM pg_notify('queen_timers_wake', '');
    END IF;
    RETURN 0;
END
$$;

-- The quota's count (tenant.max.pending, reject tenant_quota): each tenant's
-- pending timers, counted up to p_cap. The bridge calls it after bridge_lock_v2 (so the batch's own keys
-- are already locked), only for the tenants that schedule a key not staged yet, and for each of them only
-- when the batch could bring it to 90 % of the cap or its last count is a second old (PendingEstimates).
--
-- PRICE: per tenant, an index range scan of min(pending, p_cap) entries of a btree that leads with
-- tenant_id (the primary key or idx_log_timers_visible's sibling idx_log_timers_tenant_visible, V002,
-- whichever the planner finds smaller), with a heap visit for each page the visibility map does not yet
-- call all-visible. So a tenant with few pending timers costs next to nothing, and one near the cap pays
-- up to p_cap entries per batch (TenantFloodBench, docs/benchmarks.md). No lock.
-- Concurrent bridges count without seeing each other's uncommitted batches, so together they may
-- overshoot the cap by at most one batch each.
CREATE OR REPLACE FUNCTION queen.timer_tenant_pending_v1(p_tenants UUID[], p_cap INT)
RETURNS TABLE (tenant_id UUID, pending BIGINT)
LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
    SELECT queen.bridge_require_tenants_v1('timer_tenant_pending_v1', NULL, p_tenants); -- the login's own tenants only
    SELECT x.tenant_id,
           (SELECT count(*) FROM (SELECT 1 FROM queen.log_timers t WHERE t.tenant_id = x.tenant_id LIMIT p_cap) c)
      FROM (SELECT DISTINCT k.tenant_id FROM unnest(p_tenants) AS k(tenant_id)) x
$$;

-- The series quota's count (tenant.max.recurring, reject recurring_quota). For each
-- tenant of p_tenant that carries a rule in the batch: one row with queue and timer_key NULL and its
-- recurring series (rows with a rule) counted up to p_cap; and one row (series NULL) for each of the
-- batch's keys (p_tenant, p_queue, p_key aligned) that holds a rule now, so that a reschedule of an
-- existing series is not counted as a new one. The bridge calls it after bridge_lock_v2 (the batch's own
-- keys are locked, so what it says of them holds until the commit), only for tenants whose batch
-- carries a rule: a one-shot batch never pays it.
-- PRICE: per such tenant, a range scan of min(series, p_cap) entries of idx_log_timers_recurring (V002,
-- partial: one-shot rows are not in it), at the default cap (1,000) tens of microseconds; and one
-- primary-key probe per key of the batch's tenants that carry a rule. No lock. Concurrent bridges count
-- without seeing each other's uncommitted batches: together they may overshoot the cap by what one batch
-- each admits.
CREATE OR REPLACE FUNCTION queen.timer_tenant_series_v1(p_tenant UUID[], p_queue TEXT[], p_key TEXT[], p_cap INT)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, series BIGINT)
LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
    SELECT queen.bridge_require_tenants_v1('timer_tenant_series_v1', NULL, p_tenant); -- the login's own tenants only
    SELECT x.tenant_id, NULL::text, NULL::text,
           (SELECT count(*) FROM (SELECT 1 FROM queen.log_timers t
                                   WHERE t.tenant_id = x.tenant_id AND t.recurrence IS NOT NULL LIMIT p_cap) c)
      FROM (SELECT DISTINCT k.tenant_id FROM unnest(p_tenant) AS k(tenant_id)) x
    UNION ALL
    SELECT t.tenant_id, t.queue, t.timer_key, NULL::bigint
      FROM (SELECT DISTINCT k.tenant_id, k.queue, k.timer_key FROM unnest(p_tenant, p_queue, p_key) AS k(tenant_id, queue, timer_key)) k
      JOIN queen.log_timers t ON t.tenant_id = k.tenant_id AND t.queue = k.queue COLLATE "C" AND t.timer_key = k.timer_key COLLATE "C"
     WHERE t.recurrence IS NOT NULL
$$;
