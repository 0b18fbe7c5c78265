-- Outbox rows per tenant, for the backlog gauge per destination topic (the relay maps tenants to topics).
-- A count over the whole outbox: the relay runs it at most every few seconds, never per round. Reads only.
SELECT tenant_id, count(*) AS rows FROM queen.timer_audit_outbox GROUP BY tenant_id
