-- Operators' view of the staging table: peek one timer, list a queue's timers, find a recurring series
-- (`queen-timers peek`, `list`, `find`).
--
-- queen.timer_state_v1: the state of a row from PostgreSQL's clock, with the one set of definitions:
--   claimed  claim_token IS NOT NULL AND claimed_until > now(): in a sweeper's hands; a command now
--            answers too_late;
--   backoff  no token, claimed_until > now(): a failed fire waiting for its retry; cancellable;
--   due      visible_at <= now(): waiting for the next sweeper cycle (an expired lease counts here);
--   waiting  deliver_at in the future.
-- queen.timer_peek_v2(tenant, queue, timer_key): one timer WITH its payload as stored (payload_zstd says
-- whether it is compressed; nothing is decrypted) and its recurrence (the rule, the series txn and
-- the pending occurrence's seq; NULL for a one-shot timer), or no row. The claim token is not shown: it is
-- the capability to fire the row.
-- queen.timer_list_v2(tenant, queue, after_key, limit): a queue's timers in timer_key order, keyset
-- paginated (NULL after_key for the first page), WITHOUT payloads (payload_bytes gives the stored
-- size), with their recurrence; the limit is clamped to 1..1000 so a careless call cannot pull a whole queue.
--
-- Peek and list are served by the primary key (tenant_id, queue, timer_key); timer_key is COLLATE "C", so
-- the keyset order is byte order and the comparison uses the index.
--
-- queen.timer_series_v1(tenant, queue, txn): the pending occurrence of each recurring series of the queue
-- scheduled with that (series) txn, recurrence->>'txn' (an occurrence's own txn is `<txn>@<instant>`, so
-- the log never holds the series txn itself: `find` asks here). Usually one row; several when keys of
-- the queue share a txn. PRICE: reads the tenant's recurring rows through the partial index
-- idx_log_timers_recurring (tenant_id) WHERE recurrence IS NOT NULL (V002) and filters them by queue and
-- txn: one-shot rows are never read, however many the queue holds; a tenant with N recurring series
-- costs N index entries and heap fetches per call (an operator's call, never the hot path).
--
-- PRICE: none on the hot path. Locks: none (plain reads; they never wait and never block a fire).

CREATE OR REPLACE FUNCTION queen.timer_state_v1(p_claim_token UUID, p_claimed_until TIMESTAMPTZ,
                                                p_visible_at TIMESTAMPTZ, p_now TIMESTAMPTZ)
RETURNS TEXT
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT CASE
               WHEN p_claim_token IS NOT NULL AND p_claimed_until > p_now THEN 'claimed'
               WHEN p_claim_token IS NULL AND p_claimed_until > p_now THEN 'backoff'
               WHEN p_visible_at <= p_now THEN 'due'
               ELSE 'waiting'
           END
$$;

CREATE OR REPLACE FUNCTION queen.timer_peek_v2(p_tenant UUID, p_queue TEXT, p_timer_key TEXT)
RETURNS TABLE (tenant_id UUID, queue TEXT, timer_key TEXT, "partition" TEXT, deliver_at TIMESTAMPTZ,
               visible_at TIMESTAMPTZ, state TEXT, txn TEXT, message_id UUID, payload BYTEA,
               payload_zstd BOOLEAN, encrypted BOOLEAN, producer_sub TEXT, attempts INT, last_error TEXT,
               claimed_until TIMESTAMPTZ, created_at TIMESTAMPTZ, updated_at TIMESTAMPTZ, db_now TIMESTAMPTZ,
               recurrence JSONB)
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
STABLE
AS $$
    -- Lock order: none (read only).
    SELECT t.tenant_id, t.queue, t.timer_key, t."partition", t.deliver_at, t.visible_at,
           queen.timer_state_v1(t.claim_token, t.claimed_until, t.visible_at, now()),
           t.txn, t.message_id, t.payload, t.payload_zstd, t.encrypted, t.producer_sub, t.attempts,
           t.last_error, t.claimed_until, t.created_at, t.updated_at, now(), t.recurrence
      FROM queen.log_timers t
     WHERE t.tenant_id = p_tenant AND t.queue = p_queue COLLATE "C" AND t.timer_key = p_timer_key COLLATE "C"
$$;

CREATE OR REPLACE FUNCTION queen.timer_list_v2(p_tenant UUID, p_queue TEXT, p_after_key TEXT, p_limit INT)
RETURNS TABLE (timer_key TEXT, "partition" TEXT, deliver_at TIMESTAMPTZ, visible_at TIMESTAMPTZ, state TEXT,
               txn TEXT, message_id UUID, payload_bytes INT, payload_zstd BOOLEAN, encrypted BOOLEAN,
               producer_sub TEXT, attempts INT, last_error TEXT, claimed_until TIMESTAMPTZ,
               created_at TIMESTAMPTZ, updated_at TIMESTAMPTZ, recurrence JSONB)
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
STABLE
AS $$
    -- Lock order: none (read only). Keyset on the primary key.
    SELECT t.timer_key, t."partition", t.deliver_at, t.visible_at,
           queen.timer_state_v1(t.claim_token, t.claimed_until, t.visible_at, now()),
           t.txn, t.message_id, octet_length(t.payload), t.payload_zstd, t.encrypted, t.producer_sub,
           t.attempts, t.last_error, t.claimed_until, t.created_at, t.updated_at, t.recurrence
      FROM queen.log_timers t
     WHERE t.tenant_id = p_tenant
       AND t.queue = p_queue COLLATE "C"
       AND (p_after_key IS NULL OR t.timer_key > p_after_key COLLATE "C")
     ORDER BY t.timer_key
     LIMIT least(greatest(coalesce(p_limit, 100), 1), 1000)
$$;

CREATE OR REPLACE FUNCTION queen.timer_series_v1(p_tenant UUID, p_queue TEXT, p_txn TEXT)
RETURNS TABLE (timer_key TEXT, next_occurrence TIMESTAMPTZ, txn TEXT, recurrence JSONB, state TEXT)
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, queen, pg_temp -- runs as the owner: see db/least-privilege.sql
STABLE
AS $$
    -- Lock order: none (read only). `recurrence IS NOT NULL` is the partial index's predicate, so the
    -- tenant's recurring rows are read from idx_log_timers_recurring, not the queue's from the primary key.
    SELECT t.timer_key, t.deliver_at, t.txn, t.recurrence,
           queen.timer_state_v1(t.claim_token, t.claimed_until, t.visible_at, now())
      FROM queen.log_timers t
     WHERE t.tenant_id = p_tenant
       AND t.recurrence IS NOT NULL
       AND t.queue = p_queue COLLATE "C"
       AND t.recurrence ->> 'txn' = p_txn
     ORDER BY t.timer_key
$$;
