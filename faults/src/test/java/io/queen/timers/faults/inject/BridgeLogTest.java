package io.queen.timers.faults.inject;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a bridge's log says it holds: its last assignment, unless a revocation, a loss or a new start came after it; read
 * backwards across the chunks a log of megabytes is read in.
 */
class BridgeLogTest {

    private static final String CONSUMING = "16:04:16.344 INFO  [queen-bridge-ingest] i.q.t.b.i.PartitionPositions - consuming "
            + "[faults.commands.a-3, faults.commands.b-4] from the stored offsets faults.commands.a-3@508, faults.commands.b-4@385\n";
    private static final String NOISE = "16:04:25.005 WARN  [queen-bridge-ingest] o.a.k.c.NetworkClient - [Consumer clientId=bridge-1,"
            + " groupId=queen-timers-bridge] Connection to node -1 (/127.0.0.1:31416) could not be established.\n";

    @TempDir
    Path dir;

    @Test
    void theLastAssignmentIsHeldEvenBehindMegabytesOfClientWarnings() throws Exception {
        Path log = dir.resolve("bridge-1.log");
        Files.writeString(log, "=== harness: start #1 of bridge-1 at 2026-12-06T16:02:38Z\n" + CONSUMING + NOISE.repeat(20_000));
        assertThat(BridgeLog.held(log)).containsExactly("faults.commands.a-3", "faults.commands.b-4");
    }

    @Test
    void aRevocationALossOrANewStartAfterItHoldsNothing() throws Exception {
        for (String after : List.of(
                "16:04:31.291 WARN  [queen-bridge-ingest] i.q.t.b.i.IngestLoop - partitions LOST: this consumer was out of the group\n",
                "16:03:01.804 INFO  [queen-bridge-ingest] i.q.t.b.i.IngestLoop - partitions revoked by a rebalance: [faults.commands.a-3]\n",
                "=== harness: start #2 of bridge-1 at 2026-12-06T16:05:00Z\n")) {
            Path log = dir.resolve("bridge-2.log");
            Files.writeString(log, CONSUMING + NOISE.repeat(100) + after + NOISE);
            assertThat(BridgeLog.held(log)).as(after).isEmpty();
        }
    }

    @Test
    void consumedListsEveryPartitionOfEveryAssignmentLine() {
        assertThat(BridgeLog.consumed(NOISE + CONSUMING + CONSUMING.replace("faults.commands.a-3, ", "")))
                .containsExactly("faults.commands.a-3", "faults.commands.b-4", "faults.commands.b-4");
    }
}
