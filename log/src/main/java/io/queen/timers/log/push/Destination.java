package io.queen.timers.log.push;

import java.util.Objects;
import java.util.UUID;

/**
 * Where a segment goes: a partition named by (tenant, queue, partition). Tenants never share a
 * queue: two tenants with the same queue name get two queues.
 */
public record Destination(UUID tenantId, String queue, String partition) {

    public static final UUID DEFAULT_TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");
    public static final String DEFAULT_PARTITION = "Default";

    public Destination {
        Objects.requireNonNull(tenantId, "tenantId");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(partition, "partition");
    }

    @Override
    public String toString() {
        return tenantId + "/" + queue + "/" + partition;
    }
}
