package io.queen.timers.e2e;

import io.queen.timers.bridge.apply.BatchApplier;
import io.queen.timers.bridge.apply.Decision;
import io.queen.timers.bridge.apply.Incoming;
import io.queen.timers.bridge.apply.OffsetAdvance;
import io.queen.timers.bridge.apply.Outcome;
import io.queen.timers.bridge.apply.Source;
import io.queen.timers.bridge.apply.Verdict;
import io.queen.timers.bridge.wire.Command;
import io.queen.timers.client.command.Op;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/** Commands applied by the bridge's own apply step (no Kafka): what a producer's schedule/reschedule/cancel would do. */
public final class Commands {

    private final BatchApplier applier;
    private final String topic = "sweeper-test-" + UUID.randomUUID();
    private long offset;
    private Long stored;

    public Commands(DataSource ds) {
        this.applier = new BatchApplier(ds, "sweeper-tests", Duration.ofSeconds(30), 4096);
    }

    public Verdict schedule(UUID tenant, String queue, String key, Instant at) throws Exception {
        return apply(tenant, new Command(Op.SCHEDULE, queue, key, Command.DEFAULT_PARTITION, Command.Schedule.once(at, "txn-" + key,
                "{\"v\":2}".getBytes(StandardCharsets.UTF_8))));
    }

    public Verdict reschedule(UUID tenant, String queue, String key, Instant at) throws Exception {
        return apply(tenant, new Command(Op.RESCHEDULE, queue, key, Command.DEFAULT_PARTITION, Command.Schedule.once(at, "txn-" + key,
                "{\"v\":3}".getBytes(StandardCharsets.UTF_8))));
    }

    public Verdict cancel(UUID tenant, String queue, String key) throws Exception {
        return apply(tenant, new Command(Op.CANCEL, queue, key, Command.DEFAULT_PARTITION, null));
    }

    private synchronized Verdict apply(UUID tenant, Command c) throws Exception {
        long at = offset++;
        Outcome out = applier.apply(List.of(new Incoming(new Source(topic, 0, at), tenant, null, c)),
                List.of(new OffsetAdvance(topic, 0, stored, at + 1)));
        stored = at + 1;
        List<Decision> d = ((Outcome.Applied) out).decisions();
        return d.get(0).verdict();
    }
}
