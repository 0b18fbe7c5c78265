-- The audit relay's lease, its read and its one write: core's AuditRelay takes
-- the lease through queen.timer_audit_lease_v1, reads the oldest outbox rows through queen.timer_audit_read_v3,
-- publishes them, and deletes the acknowledged ones through queen.timer_audit_delete_v3. The relay's roles
-- (queen_bridge, queen_sweeper) may not DELETE from the outbox themselves, and these functions let a login of theirs
-- delete only:
--  * while it holds the relay lease (queen.timer_audit_relay_lease, V003): one row, taken and renewed only through queen.timer_audit_lease_v1, which
--    only the relay's roles may execute, for the owner's queen.timer_settings.relay_lease; the read and the delete
--    present the lease's token and are refused (42501) unless it is the live lease's. A login of any other role (the
--    operator's) can neither take nor hold it: an advisory lock (pg_try_advisory_lock, open to every login) would let
--    any login stop every tenant's audit events by holding it;
--  * rows its last read handed out: the read records their ids in queen.timer_audit_reads (V003) under a new token it
--    returns with them; the delete removes only those of the ids it is given, and only for that token.
-- By id list, never by range: an id below the largest published one may belong to a transaction that committed
-- late, and it has not been published yet.
-- What is left to the relay's roles: a login of queen_bridge or queen_sweeper that takes the lease while it is free
-- (no relay runs, or one let go or ran out) is the active relay, and may read and delete what it read, as a relay
-- does; and it may keep the lease by renewing it. Every running relay tries the lease every
-- audit.relay.standby.interval, so it is free only while no relay runs or between two tenures.
-- PRICE: each read that finds rows writes the one row of queen.timer_audit_reads (its ids, 8 bytes each, compressed
-- when long); each renewal writes the lease's row (about every third of the lease, whatever the rounds); the read and
-- the delete each probe the lease's row: one primary-key read per relay round, never per event.

-- Takes the relay lease, or renews it: with p_token NULL, or any token but the lease's, the lease is taken only when it
-- is free (it ran out, or was let go) and gets a new token; with the lease's own token it is renewed, also after it ran
-- out when nobody took it since (the holder stopped sending when it ran out: AuditRelay). Either way it runs from now
-- for the owner's relay_lease. Returns the token, when the lease runs out (the database's clock) and its length; no
-- row when another holds it. Only the relay's roles may call it (db/least-privilege.sql).
-- Lock order: the lease's row, and only to take or renew it: a standing-by relay's try reads the row without a lock
-- and writes nothing while another holds it. Two relays taking a free lease at once: the second's UPDATE waits for the
-- first's commit, finds the row taken (its WHERE is evaluated again on the new version) and returns no row.
CREATE OR REPLACE FUNCTION queen.timer_audit_lease_v1(p_token UUID)
RETURNS TABLE (token UUID, expires_at TIMESTAMPTZ, lease INTERVAL)
LANGUAGE plpgsql
VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
#variable_conflict use_column
DECLARE
    v_lease INTERVAL;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM queen.timer_audit_relay_lease l
                    WHERE l.one AND (l.token = p_token OR l.expires_at <= clock_timestamp())) THEN
        RETURN;   -- another relay holds it
    END IF;
    SELECT s.relay_lease INTO v_lease FROM queen.timer_settings s;
    v_lease := coalesce(v_lease, INTERVAL '20 seconds');
    RETURN QUERY
    UPDATE queen.timer_audit_relay_lease l
       SET token = CASE WHEN l.token = p_token THEN l.token ELSE gen_random_uuid() END,
           holder = queen.session_actor_v1(),
           taken_at = CASE WHEN l.token = p_token THEN l.taken_at ELSE clock_timestamp() END,
           expires_at = clock_timestamp() + v_lease
     WHERE l.one AND (l.token = p_token OR l.expires_at <= clock_timestamp())
    RETURNING l.token, l.expires_at, v_lease;
END
$$;

-- Lets the lease go (a relay that stops cleanly, after its last round's sends completed), so a standing-by relay takes
-- it at its next try instead of when it runs out. Only with the lease's own token; returns whether it was let go.
-- Lock order: the lease's row.
CREATE OR REPLACE FUNCTION queen.timer_audit_lease_release_v1(p_token UUID)
RETURNS BOOLEAN
LANGUAGE sql
VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
    WITH gone AS (
        UPDATE queen.timer_audit_relay_lease l SET expires_at = clock_timestamp()
         WHERE l.one AND l.token = p_token AND l.expires_at > clock_timestamp()
        RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM gone)
$$;

-- Refuses (42501) a caller that does not present the live lease's token. Internal: granted to no role.
CREATE OR REPLACE FUNCTION queen.timer_audit_lease_require_v1(p_what TEXT, p_lease UUID)
RETURNS VOID
LANGUAGE plpgsql
STABLE
AS $$
BEGIN
    IF p_lease IS NULL OR NOT EXISTS (SELECT 1 FROM queen.timer_audit_relay_lease l
                                       WHERE l.one AND l.token = p_lease AND l.expires_at > clock_timestamp()) THEN
        RAISE EXCEPTION '%: the caller does not hold the audit relay lease (only the active relay reads for publishing and deletes what it read)', p_what
            USING ERRCODE = '42501';
    END IF;
END
$$;

-- The oldest outbox rows, in id order (the order they are published in), one result row per event, as raw columns
-- the relay renders into the Kafka value (core's AuditEventValue), with the token of this read (read_token, the same
-- on every row). An event of a command or of a fire attempt comes whole: its body (`body`, the writer's jsonb as
-- text) and, from it, its trace fields for the record's W3C headers. A `fired` segment row comes as one result row
-- per timer of its `fired` arrays (ROWS FROM ... WITH ORDINALITY, frame order), each with the segment's destination
-- and first offset and the timer's own columns; its trace context stays binary. Nothing is built as jsonb here:
-- building one jsonb per fired timer and printing it cost PostgreSQL more per event than the bridge's whole apply
-- (docs/decisions.md#who-renders-the-audit-event); Java renders the same fields for a few. queen.timer_audit_events renders the same events in SQL for whoever reads
-- the outbox directly; AuditRelayIT holds the two equal, field by field.
-- A round holds whole rows only (it deletes only rows it published completely): the oldest rows while their events
-- add up to less than p_events, always at least one row; p_rows bounds the rows read for that count (both within
-- audit.relay.batch.size's range, 1 to 100,000: 22023 beyond). p_held_tenants lists the tenants whose audit topic is
-- held (the relay cannot write to it): their rows are left out, in place and in order, so the other tenants' rows
-- flow. PRICE: the primary-key scan reads past the held rows on every round while they wait (no tenant index: every
-- writer would pay for it).
-- Lock order: the one row of queen.timer_audit_reads (only the lease's holder writes it: never contended); the
-- outbox is read without row locks (one relay per database is active, and writers only ever insert).
CREATE OR REPLACE FUNCTION queen.timer_audit_read_v3(p_lease UUID, p_held_tenants UUID[], p_rows INT, p_events INT)
RETURNS TABLE (id BIGINT, seq BIGINT, tenant_id UUID, type TEXT, created_at TIMESTAMPTZ, event_id UUID, kafka_key TEXT,
               body TEXT, trace_id TEXT, span_id TEXT, trace_flags TEXT, trace_state TEXT,
               queue TEXT, "partition" TEXT, first_offset BIGINT, segment_created_at TIMESTAMPTZ,
               timer_key TEXT, txn TEXT, message_id UUID, deliver_at TIMESTAMPTZ, attempts INT, producer_sub TEXT,
               trace_context BYTEA, recur TEXT, read_token UUID)
LANGUAGE plpgsql
VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
#variable_conflict use_column
DECLARE
    v_ids   BIGINT[];
    v_token UUID;
BEGIN
    PERFORM queen.timer_audit_lease_require_v1('timer_audit_read_v3', p_lease);
    IF p_rows IS NULL OR p_rows NOT BETWEEN 1 AND 100000 OR p_events IS NULL OR p_events NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'timer_audit_read_v3: rows % and events % must be within 1 to 100000 (audit.relay.batch.size)', p_rows, p_events
            USING ERRCODE = '22023';
    END IF;
    v_ids := ARRAY(
        SELECT w.id
          FROM (SELECT x.id, x.fired, sum(coalesce(cardinality(x.fired), 1)) OVER (ORDER BY x.id) AS events_upto
                  FROM (SELECT o.id, o.fired FROM queen.timer_audit_outbox o
                         WHERE o.tenant_id <> ALL (coalesce(p_held_tenants, '{}')) ORDER BY o.id LIMIT p_rows) x) w
         WHERE w.events_upto - coalesce(cardinality(w.fired), 1) < p_events);
    IF cardinality(v_ids) = 0 THEN
        RETURN;   -- nothing handed out: the record of the last read stays (an idle relay writes nothing)
    END IF;
    v_token := gen_random_uuid();
    INSERT INTO queen.timer_audit_reads AS r (one, token, ids) VALUES (TRUE, v_token, v_ids)
    ON CONFLICT (one) DO UPDATE SET token = EXCLUDED.token, ids = EXCLUDED.ids, read_at = now();
    RETURN QUERY
    SELECT o.id, 1::bigint, o.tenant_id, o.type, o.created_at, o.event_id, o.kafka_key,
           o.event::text, o.event ->> 'traceId', o.event ->> 'spanId', o.event ->> 'traceFlags', o.event ->> 'traceState',
           NULL::text, NULL::text, NULL::bigint, NULL::timestamptz,
           NULL::text, NULL::text, NULL::uuid, NULL::timestamptz, NULL::int, NULL::text, NULL::bytea, NULL::text,
           v_token
      FROM queen.timer_audit_outbox o
     WHERE o.id = ANY (v_ids) AND o.fired IS NULL
    UNION ALL
    SELECT o.id, f.seq, o.tenant_id, o.type, o.created_at, f.event_id, NULL::text,
           NULL::text, NULL::text, NULL::text, NULL::text, NULL::text,
           o.event ->> 'queue', o.event ->> 'partition', (o.event ->> 'offset')::bigint,
           (o.event ->> 'segmentCreatedAt')::timestamptz,
           f.timer_key, f.txn, f.message_id, f.deliver_at, f.attempts, f.producer_sub, f.trace_context, f.recur::text,
           v_token
      FROM queen.timer_audit_outbox o
     CROSS JOIN LATERAL ROWS FROM (unnest(o.fired), unnest(o.fired_subs), unnest(o.fired_traces), unnest(o.fired_recur))
           WITH ORDINALITY AS f(event_id, timer_key, txn, message_id, deliver_at, attempts, producer_sub, trace_context, recur, seq)
     WHERE o.id = ANY (v_ids) AND o.fired IS NOT NULL
     ORDER BY 1, 2;
END
$$;

-- Deletes the outbox rows the broker acknowledged: of p_ids, only those the last read handed out under p_token, and
-- only for the holder of the live lease (42501 otherwise, and for a token that is not the last read's).
-- Returns the rows deleted. Lock order: outbox rows only (a leaf of the project lock order).
CREATE OR REPLACE FUNCTION queen.timer_audit_delete_v3(p_lease UUID, p_token UUID, p_ids BIGINT[])
RETURNS INT
LANGUAGE plpgsql
VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
DECLARE
    v_read BIGINT[];
    v_gone INT;
BEGIN
    PERFORM queen.timer_audit_lease_require_v1('timer_audit_delete_v3', p_lease);
    SELECT r.ids INTO v_read FROM queen.timer_audit_reads r WHERE r.one AND r.token = p_token;
    IF v_read IS NULL THEN
        RAISE EXCEPTION 'timer_audit_delete_v3: % is not the token of the last read (a relay deletes only what it read)', p_token
            USING ERRCODE = '42501';
    END IF;
    DELETE FROM queen.timer_audit_outbox o WHERE o.id = ANY (p_ids) AND o.id = ANY (v_read);
    GET DIAGNOSTICS v_gone = ROW_COUNT;
    RETURN v_gone;
END
$$;

-- Wakes the active audit relay at the commit of a transaction that wrote the outbox: an idle relay otherwise
-- finds a new row only at its next poll (audit.relay.poll.interval, 200 ms), which was most of a lone timer's
-- wait for its `fired` and `scheduled` events (docs/benchmarks.md#figures-behind-the-schemas-choices). One NOTIFY queen_timers_audit per inserting statement; PostgreSQL
-- folds a transaction's identical notifications into one, sent at its commit. A statement trigger also fires
-- for an INSERT ... SELECT of no row; telling would need a transition table, which copies every inserted row,
-- so such a transaction costs one relay round that finds nothing. The relay LISTENs on its
-- connection while it is active (AuditRelay). Runs with the inserting function's rights (the writers are
-- SECURITY DEFINER functions); needs no grant.
-- PRICE: every commit that writes the outbox notifies (each bridge batch, each fire, fail and dead-letter),
-- and PostgreSQL serializes the commits of notifying transactions cluster-wide (one lock, held through the
-- commit's WAL flush), a Queen broker's notifying commits included; and a round of the relay per commit while it
-- keeps up (the steady benchmark's lateness and rounds with it: docs/benchmarks.md#figures-behind-the-schemas-choices).
CREATE OR REPLACE FUNCTION queen.timer_audit_wake_v1()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_notify('queen_timers_audit', '');
    RETURN NULL;
END
$$;

-- Created once, never re-created by a later run of this file: a DROP TRIGGER would take ACCESS EXCLUSIVE on
-- the outbox until the whole migration commits, behind any fire in flight and ahead of every writer. A
-- different trigger is a versioned migration's job.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger
                    WHERE tgname = 'timer_audit_outbox_wake' AND tgrelid = 'queen.timer_audit_outbox'::regclass) THEN
        CREATE TRIGGER timer_audit_outbox_wake
            AFTER INSERT ON queen.timer_audit_outbox
            FOR EACH STATEMENT EXECUTE FUNCTION queen.timer_audit_wake_v1();
    END IF;
END
$$;
