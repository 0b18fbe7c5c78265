-- At start: up to 5 queues Queen marks encryption_enabled, to name them when no key is configured.
SELECT q.tenant_id, q.name FROM queen.queues q WHERE q.encryption_enabled ORDER BY q.tenant_id, q.name LIMIT 5
