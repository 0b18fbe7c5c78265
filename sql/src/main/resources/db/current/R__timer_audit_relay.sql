-- The audit relay's read and its one write (issue 24, point 6; issue 47, point 3): core's AuditRelay reads the
-- oldest outbox rows through queen.timer_audit_read_v2, publishes them, and deletes the acknowledged ones through
-- queen.timer_audit_delete_v2. The relay's roles (queen_bridge, queen_sweeper) may not DELETE from the outbox
-- themselves, and these functions let a login of theirs delete only:
--  * while its session holds the relay lock, the advisory lock one relay per database publishes under (AuditRelay
--    takes it with pg_try_advisory_lock on the connection it reads and deletes on); a login that is not the active
--    relay is refused, 42501;
--  * rows its last read handed out: the read records their ids in queen.timer_audit_reads (V134) under a new token it
--    returns with them; the delete removes only those of the ids it is given, and only for that token. Its
--    predecessor, timer_audit_delete_v1 (dropped by V134), deleted any id for any login of either role: any tenant's
--    unpublished events.
-- By id list, never by range: an id below the largest published one may belong to a transaction that committed
-- late, and it has not been published yet.
-- What is left to the relay (the lock is PostgreSQL's advisory lock, which any login may take while no relay holds
-- it): a login that takes the free lock is the active relay, and may read and delete what it read, as a relay does.
-- Every running bridge and sweeper relay keeps trying the lock (audit.relay.standby.interval), so it is free only
-- while no relay runs or between two tenures.
-- PRICE: each read that finds rows writes the one row of queen.timer_audit_reads (its ids, 8 bytes each, compressed
-- when long); the read and the delete each read pg_locks, which copies the lock table under the lock manager's
-- partition locks (shared, microseconds on a normal lock table): two per relay round, never per event.

-- Whether THIS session holds the relay lock: AuditRelay.LOCK_KEY ("queenaud", 0x717565656e617564), which pg_locks
-- shows for a bigint advisory key as classid = its high 32 bits (1903519077), objid = its low 32 bits (1851880804),
-- objsubid 1. The two places name the same number: every relay IT fails if they part. Internal: granted to no role.
CREATE OR REPLACE FUNCTION queen.timer_audit_relay_held_v1()
RETURNS BOOLEAN
LANGUAGE sql
STABLE
AS $$
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks l
                    WHERE l.locktype = 'advisory' AND l.pid = pg_catalog.pg_backend_pid() AND l.granted
                      AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
                      AND l.classid = 1903519077 AND l.objid = 1851880804 AND l.objsubid = 1)
$$;

-- The oldest outbox rows, in id order (the order they are published in), one result row per event, as raw columns
-- the relay renders into the Kafka value (core's AuditEventValue), with the token of this read (read_token, the same
-- on every row). An event of a command or of a fire attempt comes whole: its body (`body`, the writer's jsonb as
-- text) and, from it, its trace fields for the record's W3C headers. A `fired` segment row comes as one result row
-- per timer of its `fired` arrays (ROWS FROM ... WITH ORDINALITY, frame order), each with the segment's destination
-- and first offset and the timer's own columns; its trace context stays binary. Nothing is built as jsonb here:
-- building one jsonb per fired timer and printing it cost ~100 us of this statement per event (issue 48's profile),
-- Java renders the same fields for a few. queen.timer_audit_events renders the same events in SQL for whoever reads
-- the outbox directly; AuditRelayIT holds the two equal, field by field.
-- A round holds whole rows only (it deletes only rows it published completely): the oldest rows while their events
-- add up to less than p_events, always at least one row; p_rows bounds the rows read for that count. p_held_tenants
-- lists the tenants whose audit topic is held (the relay cannot write to it): their rows are left out, in place and in
-- order, so the other tenants' rows flow. PRICE: the primary-key scan reads past the held rows on every round while
-- they wait (no tenant index: every writer would pay for it).
-- Lock order: the one row of queen.timer_audit_reads (only the relay lock's holder writes it: never contended); the
-- outbox is read without row locks (one relay per database is active, and writers only ever insert).
CREATE OR REPLACE FUNCTION queen.timer_audit_read_v2(p_held_tenants UUID[], p_rows INT, p_events INT)
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
    IF NOT queen.timer_audit_relay_held_v1() THEN
        RAISE EXCEPTION 'timer_audit_read_v2: this session does not hold the audit relay lock (only the active relay reads for publishing)'
            USING ERRCODE = '42501';
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
-- only for the session holding the relay lock (42501 otherwise, and for a token that is not the last read's).
-- Returns the rows deleted. Lock order: outbox rows only (a leaf of the project lock order).
CREATE OR REPLACE FUNCTION queen.timer_audit_delete_v2(p_token UUID, p_ids BIGINT[])
RETURNS INT
LANGUAGE plpgsql
VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
AS $$
DECLARE
    v_read BIGINT[];
    v_gone INT;
BEGIN
    IF NOT queen.timer_audit_relay_held_v1() THEN
        RAISE EXCEPTION 'timer_audit_delete_v2: this session does not hold the audit relay lock (only the active relay deletes what it read)'
            USING ERRCODE = '42501';
    END IF;
    SELECT r.ids INTO v_read FROM queen.timer_audit_reads r WHERE r.one AND r.token = p_token;
    IF v_read IS NULL THEN
        RAISE EXCEPTION 'timer_audit_delete_v2: % is not the token of the last read (a relay deletes only what it read)', p_token
            USING ERRCODE = '42501';
    END IF;
    DELETE FROM queen.timer_audit_outbox o WHERE o.id = ANY (p_ids) AND o.id = ANY (v_read);
    GET DIAGNOSTICS v_gone = ROW_COUNT;
    RETURN v_gone;
END
$$;

-- Wakes the active audit relay at the commit of a transaction that wrote the outbox (issue 25): an idle
-- relay otherwise finds a new row only at its next poll (audit.relay.poll.interval, 200 ms), which was the
-- typical wait of a lone timer's `fired` and `scheduled` events (PipelineBench --mode single: p50 94 -> 26 ms,
-- bench/results/2026-12-04/single-*.txt). One NOTIFY queen_timers_audit per inserting statement; PostgreSQL
-- folds a transaction's identical notifications into one, sent at its commit. A statement trigger also fires
-- for an INSERT ... SELECT of no row; telling would need a transition table, which copies every inserted row,
-- so such a transaction costs one relay round that finds nothing. The relay LISTENs on its lock
-- connection while it is active (AuditRelay). Runs with the inserting function's rights (the writers are
-- SECURITY DEFINER functions); needs no grant.
-- PRICE: every commit that writes the outbox now notifies (each bridge batch, each fire, fail and
-- dead-letter; before, only bridge batches with a timer due within bridge.wake.within), and PostgreSQL
-- serializes the commits of notifying transactions cluster-wide (one lock, held through the commit's WAL
-- flush), a Queen broker's notifying commits included. Measured with it: steady 2,000/s, p99 89 ms
-- (bench/results/2026-12-04/steady2000-283b103.txt); and a round of the relay per commit while it keeps up
-- (~180 rounds/s at 2,000 timers/s).
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
