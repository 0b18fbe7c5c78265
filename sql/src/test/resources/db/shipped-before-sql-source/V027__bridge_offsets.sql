-- V027  queen.bridge_offsets: where each bridge consumer group stands in each Kafka partition.
--
-- Exactly-once apply (DESIGN §4): a poll batch is applied in ONE transaction that writes the timer
-- rows, one audit outbox row per record, and the next offset of every Kafka partition in the batch
-- here. Kafka's own committed offsets are never read (enable.auto.commit=false): on assignment the
-- bridge seeks to next_offset, so a crash anywhere either kept the whole batch or none of it.
--
-- Zombie fence: a batch advances next_offset only by check-and-set (UPDATE ... WHERE next_offset =
-- the offset the bridge sought to; INSERT ... ON CONFLICT DO NOTHING for a partition never seen). A
-- consumer that lost its partition to another instance, or a commit whose acknowledgement was lost,
-- finds a different value, rolls its whole batch back and seeks again. PRICE: none on the happy
-- path (the row is the bridge's own), one wasted batch after a rebalance race.
--
-- No tenant column: offsets belong to a consumer group, not to a tenant; a topic maps to one tenant
-- by configuration. Lock order: this table is a leaf; the bridge writes it last in its transaction,
-- after queen.log_timers and the outbox.

CREATE TABLE IF NOT EXISTS queen.bridge_offsets (
    group_id     TEXT NOT NULL,
    topic        TEXT NOT NULL,
    "partition"  INT NOT NULL,
    next_offset  BIGINT NOT NULL CHECK (next_offset >= 0),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (group_id, topic, "partition")
);
