package io.queen.timers.sql;

import java.util.List;
import java.util.Map;

/**
 * Queen's log tables as facts, written from Queen's sources at queen-mq/queen 81010fab
 * (server/sql/schema.sql for queen.queues; procedures/001_log_schema.sql in its version with
 * log_partitions.oldest_live_at; procedures/005_log_ack.sql for queen.log_dlq; 006_log_maintenance.sql
 * for log_partition_dead_v1), in the form PostgreSQL's catalog prints them. Columns are in Queen's order:
 * "name type [NOT NULL] [DEFAULT expression]".
 */
final class QueenLogFacts {

    record Table(List<String> columns, List<String> indexes, List<String> constraints, List<String> storageParameters,
                 List<String> storageOverrides) {}

    static final Map<String, Table> TABLES = Map.of(
            "queen.queues", new Table(
                    List.of("id uuid NOT NULL DEFAULT gen_random_uuid()",
                            "name character varying(255) NOT NULL",
                            "tenant_id uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001'::uuid",
                            "namespace character varying(255)",
                            "task character varying(255)",
                            "priority integer DEFAULT 0",
                            "lease_time integer DEFAULT 60",
                            "retry_limit integer DEFAULT 3",
                            "retry_delay integer DEFAULT 1000",
                            "ttl integer DEFAULT 3600",
                            "dead_letter_queue boolean DEFAULT true",
                            "dlq_after_max_retries boolean DEFAULT true",
                            "delayed_processing integer DEFAULT 0",
                            "window_buffer integer DEFAULT 0",
                            "retention_seconds integer DEFAULT 0",
                            "completed_retention_seconds integer DEFAULT 0",
                            "retention_enabled boolean DEFAULT false",
                            "encryption_enabled boolean DEFAULT false",
                            "max_wait_time_seconds integer DEFAULT 0",
                            "max_queue_size integer DEFAULT 0",
                            "min_pop_wait_time integer DEFAULT 0",
                            "dedup_window_seconds integer NOT NULL DEFAULT 3600",
                            "created_at timestamp with time zone DEFAULT now()"),
                    List.of("CREATE INDEX idx_queues_name ON queen.queues USING btree (name)",
                            "CREATE UNIQUE INDEX queues_pkey ON queen.queues USING btree (id)",
                            "CREATE UNIQUE INDEX queues_tenant_name_uk ON queen.queues USING btree (tenant_id, name)"),
                    List.of("PRIMARY KEY (id)"),
                    List.of(),
                    List.of()),
            "queen.log_partitions", new Table(
                    List.of("id uuid NOT NULL DEFAULT gen_random_uuid()",
                            "queue_id uuid NOT NULL",
                            "name text NOT NULL DEFAULT 'Default'::text",
                            "last_offset bigint NOT NULL DEFAULT '-1'::integer",
                            "log_start bigint NOT NULL DEFAULT 0",
                            "txns_start bigint NOT NULL DEFAULT 0",
                            "last_write_at timestamp with time zone NOT NULL DEFAULT now()",
                            "created_at timestamp with time zone NOT NULL DEFAULT now()",
                            "oldest_live_at timestamp with time zone",
                            "oldest_txn_at timestamp with time zone"),
                    List.of("CREATE INDEX idx_log_partitions_queue_oldest ON queen.log_partitions USING btree (queue_id, oldest_live_at)"
                                    + " WHERE (oldest_live_at IS NOT NULL)",
                            "CREATE INDEX idx_log_partitions_queue_oldest_txn ON queen.log_partitions USING btree (queue_id, oldest_txn_at)"
                                    + " WHERE (oldest_txn_at IS NOT NULL)",
                            "CREATE INDEX idx_log_partitions_queue_write ON queen.log_partitions USING btree (queue_id, last_write_at)",
                            "CREATE UNIQUE INDEX log_partitions_pkey ON queen.log_partitions USING btree (id)",
                            "CREATE UNIQUE INDEX log_partitions_queue_id_name_key ON queen.log_partitions USING btree (queue_id, name)"),
                    List.of("FOREIGN KEY (queue_id) REFERENCES queen.queues(id) ON DELETE CASCADE",
                            "PRIMARY KEY (id)",
                            "UNIQUE (queue_id, name)"),
                    List.of("autovacuum_vacuum_cost_delay=0", "autovacuum_vacuum_scale_factor=0", "autovacuum_vacuum_threshold=500",
                            "fillfactor=70", "vacuum_truncate=off"),
                    List.of()),
            "queen.log_segments", new Table(
                    List.of("partition_id uuid NOT NULL",
                            "base_offset bigint NOT NULL",
                            "end_offset bigint NOT NULL",
                            "created_at timestamp with time zone NOT NULL",
                            "blob bytea NOT NULL"),
                    List.of("CREATE UNIQUE INDEX log_segments_pkey ON queen.log_segments USING btree (partition_id, base_offset)"),
                    List.of("FOREIGN KEY (partition_id) REFERENCES queen.log_partitions(id) ON DELETE CASCADE",
                            "PRIMARY KEY (partition_id, base_offset)"),
                    List.of("autovacuum_vacuum_cost_delay=0", "autovacuum_vacuum_cost_limit=4000",
                            "autovacuum_vacuum_insert_scale_factor=0.3", "autovacuum_vacuum_scale_factor=0.1",
                            "toast.autovacuum_vacuum_cost_delay=0", "toast.autovacuum_vacuum_cost_limit=4000",
                            "toast.autovacuum_vacuum_insert_scale_factor=0.3", "toast.autovacuum_vacuum_scale_factor=0.1"),
                    List.of("blob e")),
            "queen.log_txns", new Table(
                    List.of("partition_id uuid NOT NULL",
                            "base_offset bigint NOT NULL",
                            "end_offset bigint NOT NULL",
                            "created_at timestamp with time zone NOT NULL",
                            "hashes bytea NOT NULL"),
                    List.of("CREATE UNIQUE INDEX log_txns_pkey ON queen.log_txns USING btree (partition_id, base_offset)"),
                    List.of("PRIMARY KEY (partition_id, base_offset)"),
                    List.of("autovacuum_vacuum_cost_delay=0", "autovacuum_vacuum_insert_scale_factor=0.3",
                            "autovacuum_vacuum_scale_factor=0.1"),
                    List.of()),
            "queen.log_consumers", new Table(
                    List.of("partition_id uuid NOT NULL",
                            "consumer_group text NOT NULL DEFAULT '__QUEUE_MODE__'::text",
                            "committed bigint NOT NULL DEFAULT '-1'::integer",
                            "batch_end bigint",
                            "worker_id text",
                            "lease_expires_at timestamp with time zone",
                            "lease_acquired_at timestamp with time zone",
                            "batch_retry_count integer NOT NULL DEFAULT 0",
                            "attempt_offset bigint",
                            "attempt_count integer NOT NULL DEFAULT 0",
                            "total_consumed bigint NOT NULL DEFAULT 0",
                            "lease_conflated boolean NOT NULL DEFAULT false",
                            "created_at timestamp with time zone NOT NULL DEFAULT now()"),
                    List.of("CREATE UNIQUE INDEX log_consumers_pkey ON queen.log_consumers USING btree (partition_id, consumer_group)"),
                    List.of("FOREIGN KEY (partition_id) REFERENCES queen.log_partitions(id) ON DELETE CASCADE",
                            "PRIMARY KEY (partition_id, consumer_group)"),
                    List.of("autovacuum_vacuum_cost_delay=0", "autovacuum_vacuum_scale_factor=0", "autovacuum_vacuum_threshold=500",
                            "fillfactor=50", "vacuum_truncate=off"),
                    List.of()),
            "queen.log_dlq", new Table(
                    List.of("id uuid NOT NULL DEFAULT gen_random_uuid()",
                            "partition_id uuid NOT NULL",
                            "consumer_group text NOT NULL",
                            "offset bigint NOT NULL",
                            "message_id uuid",
                            "transaction_id text",
                            "payload jsonb",
                            "error text",
                            "retry_count integer DEFAULT 0",
                            "failed_at timestamp with time zone NOT NULL DEFAULT now()"),
                    List.of("CREATE INDEX idx_log_dlq_partition_failed_at ON queen.log_dlq USING btree (partition_id, failed_at DESC)",
                            "CREATE UNIQUE INDEX log_dlq_pkey ON queen.log_dlq USING btree (id)"),
                    List.of("PRIMARY KEY (id)"),
                    List.of(),
                    List.of()));

    /** Queen's partition-cleanup predicate: name, parameter NAMES, result, language, volatility. */
    static final String DEAD_PARTITION_FUNCTION =
            "log_partition_dead_v1(p_pid uuid, p_cutoff timestamp with time zone) RETURNS boolean LANGUAGE sql STABLE";

    /**
     * Every function name Queen defines in the schema files named above and in 025_log_timers.sql: none of
     * the project's own functions may carry one of these names (only log_partition_dead_v1, which is Queen's).
     */
    static final List<String> QUEEN_FUNCTION_NAMES = List.of(
            "log_unnest_hashes", "log_push_one_v1", "log_push_multi_v1", "log_segment_at_v1",
            "log_pop_v1", "log_pop_specific_v1", "log_pop_wildcard_wire_v1", "log_pop_wildcard_bin_v1",
            "log_pop_discover_wire_v1", "log_has_pending_v1", "log_partition_has_pending_v1", "log_discover_has_pending_v1",
            "log_ack_v1", "log_ack_at_v1", "log_ack_multi_v1", "log_ack_by_hash_v1", "log_transaction_wire_v1",
            "log_retention_boundary_v1", "log_retention_step_v1", "log_txns_purge_step_v1", "log_evict_max_wait_step_v1",
            "log_partition_cleanup_step_v1",
            "log_timers_apply_v1", "log_timers_due_v1", "log_timers_claim_v1", "log_timers_fire_v1", "log_timers_fail_v1",
            "log_timers_dlq_v1", "log_timers_peek_v1", "log_timers_list_v1");

    private QueenLogFacts() {}

    /** "name type [NOT NULL] [DEFAULT expression]" of a catalog column, the form of the facts above. */
    static String describe(Catalog.Column c) {
        return c.name() + " " + c.type() + (c.notNull() ? " NOT NULL" : "")
                + (c.expression().isEmpty() ? "" : " DEFAULT " + c.expression());
    }
}
