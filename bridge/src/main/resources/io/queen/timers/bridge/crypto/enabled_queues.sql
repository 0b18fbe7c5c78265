-- The destination queues of a batch that Queen marks encryption_enabled. A plain read: no row lock,
-- and nothing here ever writes queen.queues (docs/decisions.md#the-queue-is-born-at-the-fire).
SELECT q.tenant_id, q.name
  FROM queen.queues q
 WHERE q.encryption_enabled
   AND (q.tenant_id, q.name) IN (SELECT * FROM unnest(?::uuid[], ?::text[]))
