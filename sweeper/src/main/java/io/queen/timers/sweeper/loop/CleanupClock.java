package io.queen.timers.sweeper.loop;

import io.queen.timers.log.cleanup.PartitionCleanup;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Partition cleanup on its own slow clock (docs/decisions.md#partition-cleanup-runs-on-its-own-slow-clock):
 * one bounded {@link PartitionCleanup} pass every
 * {@code cleanup.interval}, on a thread of its own, never on the fire path. A pending timer does not keep its
 * destination alive; the fire provisions a deleted partition again. Off when {@code cleanup.enabled=false}
 * (a Queen broker sharing the database does its own).
 */
public final class CleanupClock implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CleanupClock.class);

    private final SlowClock clock;

    public CleanupClock(PartitionCleanup cleanup, Duration interval) {
        this.clock = new SlowClock("sweeper-cleanup", interval, interval, () -> {
            try {
                List<UUID> deleted = cleanup.runOnce();
                if (!deleted.isEmpty()) {
                    LOG.info("partition cleanup deleted {} dead partitions (idle > {})", deleted.size(), cleanup.idle());
                }
            } catch (Exception e) {
                LOG.warn("partition cleanup failed ({}); next run in {}", e.toString(), interval);
            }
        });
    }

    @Override
    public void close() {
        clock.close();
    }
}
