-- Where fired and dead-lettered timers go: provision + pre-lock destination partitions.
--
-- queen.timer_destinations_v1(p_tenants, p_queues, p_partitions) resolves each (tenant, queue,
-- partition) to a queen.log_partitions id, creating the queue and the partition when they do not
-- exist, and returns with every one of those partition rows locked FOR UPDATE by the caller's
-- transaction. The fire (R__timer_fire.sql) and the dead-letter (R__timer_dead_letter.sql) call it.
--
-- Guarantees:
--  * The queue is born here, through the log's own provisioning (queen.log_provision_v1: ordered
--    inserts, ON CONFLICT DO NOTHING), never on the schedule path
--    (docs/decisions.md#the-queue-is-born-at-the-fire).
--  * Every partition a fire will push into is locked in ONE statement in ascending id
--    (queen.log_lock_partitions_v1) before the first push: two fires with overlapping destinations
--    acquire them in the same order and never deadlock.
--  * A partition deleted by cleanup between provisioning and locking comes back missing from the lock;
--    the whole round (inserts and locks) runs in a subtransaction that is rolled back, and the next
--    round provisions and locks everything again. Rolling back is what keeps the lock order:
--    re-provisioning while holding the other partitions would write queen.queues after holding
--    queen.log_partitions rows. After 3 rounds: SQLSTATE 40001 (transient, no attempt spent).
--
-- Lock order: queen.queues (provision inserts, ordered by unique key), then queen.log_partitions
-- (provision inserts by unique key, then FOR UPDATE in ascending id, one statement). The caller
-- already holds its queen.log_timers rows and takes the leaves afterwards.
--
-- PRICE: one subtransaction per call (the EXCEPTION block), i.e. per fire: a few microseconds, paid so
-- that a concurrent cleanup can never make a fire violate the lock order.

CREATE OR REPLACE FUNCTION queen.timer_destinations_v1(p_tenants UUID[], p_queues TEXT[], p_partitions TEXT[])
RETURNS TABLE (tenant_id UUID, queue TEXT, "partition" TEXT, partition_id UUID)
LANGUAGE plpgsql
VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    v_t      UUID[];
    v_q      TEXT[];
    v_p      TEXT[];
    v_id     UUID[];
    v_locked UUID[];
BEGIN
    IF coalesce(cardinality(p_tenants), 0) = 0 THEN
        RETURN;
    END IF;
    IF cardinality(p_queues) IS DISTINCT FROM cardinality(p_tenants)
       OR cardinality(p_partitions) IS DISTINCT FROM cardinality(p_tenants) THEN
        RAISE EXCEPTION 'timer_destinations_v1: tenants, queues and partitions differ in length' USING ERRCODE = '22023';
    END IF;

    FOR v_round IN 1..3 LOOP
        BEGIN
            -- Lock order: queen.queues, then queen.log_partitions (ordered inserts, ON CONFLICT DO NOTHING).
            SELECT array_agg(pr.tenant_id), array_agg(pr.queue), array_agg(pr."partition"), array_agg(pr.partition_id)
              INTO v_t, v_q, v_p, v_id
              FROM queen.log_provision_v1(p_tenants, p_queues, p_partitions) pr;

            -- Lock order: queen.log_partitions rows, ascending id, one statement.
            SELECT array_agg(l.id) INTO v_locked
              FROM queen.log_lock_partitions_v1(v_id) AS l(id);

            IF coalesce(cardinality(v_locked), 0) < cardinality(v_id) THEN
                -- Deleted by cleanup meanwhile: roll this round back (its locks too) and start over.
                RAISE EXCEPTION 'destination partition deleted during the fire' USING ERRCODE = 'QT001';
            END IF;

            RETURN QUERY
                SELECT u.t, u.q, u.p, u.id
                  FROM unnest(v_t, v_q, v_p, v_id) AS u(t, q, p, id);
            RETURN;
        EXCEPTION WHEN SQLSTATE 'QT001' THEN
            -- the subtransaction is rolled back: no partition of this round is held any more
        END;
    END LOOP;

    RAISE EXCEPTION 'destination partitions kept disappearing during the fire (3 rounds); retry'
        USING ERRCODE = '40001';
END;
$$;
