package io.queen.timers.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.stack.Kafka;
import io.queen.timers.stack.Postgres;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestKafka;
import io.queen.timers.testkit.TestPostgres;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Ingest throughput end to end (not a test): schedule commands already in Kafka → committed timer
 * rows + outbox rows + offsets, on the embedded stack (in-process Kafka broker, embedded PostgreSQL 17).
 * The bridge runs as it ships (one transaction per poll batch); the naive baseline is the same bridge
 * with {@code kafka.max.poll.records=1}, i.e. one transaction per command, measured in the same run
 * on its own database. The relay is off in both: publishing is not ingest.
 *
 * <pre>
 * mvn -B -q -pl bench -am package -DskipTests
 * java -Xmx1g -cp bench/target/benchmarks.jar io.queen.timers.bench.IngestBench [commands keys payloadBytes naiveCommands]
 * </pre>
 */
public final class IngestBench {

    private IngestBench() {}

    public static void main(String[] args) {
        BenchPostgres.startForTestkit(); // durable unless -Dbench.fsync=off (docs/benchmarks.md)
        try {
            bench(args);
            System.exit(0);
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1); // the in-process broker's threads would keep the JVM alive
        }
    }

    private static void bench(String[] args) throws Exception {
        int commands = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int keys = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        int payloadBytes = args.length > 2 ? Integer.parseInt(args[2]) : 200;
        int naiveCommands = args.length > 3 ? Integer.parseInt(args[3]) : 10_000;

        System.out.printf("IngestBench: %,d schedule commands over %,d keys, %d-byte payloads; naive baseline on %,d%n",
                commands, keys, payloadBytes, naiveCommands);
        String batchedTopic;
        String naiveTopic;
        Map<String, Object> p = TestKafka.producerProps();
        p.put("linger.ms", 10);
        // Not idempotent: under full CPU the in-process broker answered a burst of 200,000 idempotent sends with
        // OUT_OF_ORDER_SEQUENCE_NUMBER and never recovered. Order and duplicates do not matter to this workload
        // (every send is checked, and the run checks the outbox count); one in flight keeps it simple.
        p.put("enable.idempotence", false);
        p.put("max.in.flight.requests.per.connection", 1);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            batchedTopic = produce(producer, commands, keys, payloadBytes);
            naiveTopic = produce(producer, naiveCommands, keys, payloadBytes);
        }

        Run batched = run("batched", batchedTopic, commands, s -> {});
        Run naive = run("naive", naiveTopic, naiveCommands, s -> s.kafka("max.poll.records", 1));

        System.out.printf("%nbatched : %,10.0f commands/s steady (%,.0f/s including group join), %,d commands in %.2f s%n",
                batched.steadyRate(), batched.wallRate(), commands, batched.wallSeconds);
        System.out.printf("naive   : %,10.0f commands/s steady (%,.0f/s including group join), %,d commands in %.2f s  (one transaction per command)%n",
                naive.steadyRate(), naive.wallRate(), naiveCommands, naive.wallSeconds);
        System.out.printf("ratio   : %.1fx (steady)%n", batched.steadyRate() / naive.steadyRate());
        System.out.printf("load    : %s (/proc/loadavg at the end; 2 cores: other work on the machine slows both runs)%n", loadavg());
        System.out.printf("memory  : heap used peak %,d MiB (max %,d MiB), process RSS %s (this JVM: bridge + Kafka broker; PostgreSQL is its own process)%n",
                heapPeakMiB(), Runtime.getRuntime().maxMemory() >> 20, rss());
    }

    record Run(double wallSeconds, double steadySeconds, int commands) {
        double wallRate() {
            return commands / wallSeconds;
        }

        double steadyRate() {
            return commands / steadySeconds;
        }
    }

    /** Starts the bridge (as deployed: its login, its defaults) on a fresh database and times it until every record is committed. */
    private static Run run(String name, String topic, int commands, Consumer<ServiceSettings> extra) throws Exception {
        try (FreshDatabase db = TestPostgres.createDatabase("IngestBench_" + name);
                Stack stack = Stack.builder().postgres(Postgres.external(db.jdbcUrl(), db.user(), db.password()))
                        .kafka(Kafka.external(TestKafka.bootstrapServers())).migrated().start()) {
            DataSource ds = stack.owner();
            String group = BridgeSettings.definition().key(BridgeSettings.GROUP_ID).defaultValue();
            long start = System.nanoTime();
            long first = 0;
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            try (BridgeMain bridge = stack.start(BridgeMain.SERVICE, (s, st) -> {
                s.set(RouteSettings.COMMAND_TOPICS, List.of(topic)).set(AuditSettings.RELAY_ENABLED, false)
                        .set(BridgeSettings.START_POSITION, "earliest"); // the topic is filled before the bridge starts
                extra.accept(s);
            }, Dependencies.defaults(registry))) {
                long done;
                while ((done = offsets(ds, group)) < commands) {
                    if (first == 0 && done > 0) {
                        first = System.nanoTime();
                        System.out.printf("  %s: first batch committed after %.2f s (group join, first fetch)%n", name, (first - start) / 1e9);
                    }
                    Thread.sleep(20);
                }
            }
            long end = System.nanoTime();
            long rows = query(ds, "SELECT count(*) FROM queen.log_timers");
            long outbox = query(ds, "SELECT count(*) FROM queen.timer_audit_outbox");
            io.micrometer.core.instrument.Timer apply = registry.timer("queen.timers.bridge.batch.apply");
            System.out.printf("  %s: %,d timer rows, %,d outbox rows; %,d batches, %.1f ms mean apply, %.2f s in apply (of %.2f s)%n",
                    name, rows, outbox, apply.count(), apply.mean(java.util.concurrent.TimeUnit.MILLISECONDS),
                    apply.totalTime(java.util.concurrent.TimeUnit.SECONDS), (end - start) / 1e9);
            if (outbox != commands) {
                throw new IllegalStateException(name + ": expected " + commands + " outbox rows, found " + outbox);
            }
            // steady: from the first committed batch; the records committed before it are left out of its count
            return new Run((end - start) / 1e9, (end - (first == 0 ? start : first)) / 1e9, commands);
        }
    }

    /** One producer for every topic of the run, and every send checked: a record that did not land fails the run. */
    private static String produce(KafkaProducer<byte[], byte[]> producer, int commands, int keys, int payloadBytes) {
        String topic = TestKafka.newTopic("ingest-bench", 4);
        String pad = "x".repeat(Math.max(0, payloadBytes - 30));
        long t = System.nanoTime();
        AtomicReference<Exception> failed = new AtomicReference<>();
        for (int i = 0; i < commands; i++) {
            String key = "key-" + (i % keys);
            String payload = String.format("{\"i\":%10d,\"pad\":\"%s\"}", i, pad);
            producer.send(TimerCommand.schedule("bench.ingest", key).delay(Duration.ofHours(1)).txn("txn-" + key).payload(payload).envelope(topic), (m, e) -> {
                        if (e != null) {
                            failed.compareAndSet(null, e);
                        }
                    });
        }
        producer.flush();
        if (failed.get() != null) {
            throw new IllegalStateException("producing the benchmark's commands failed", failed.get());
        }
        System.out.printf("  produced %,d commands to %s in %.2f s (not measured)%n", commands, topic, (System.nanoTime() - t) / 1e9);
        return topic;
    }

    private static long offsets(DataSource ds, String group) throws SQLException {
        return query(ds, "SELECT coalesce(sum(next_offset), 0) FROM queen.bridge_offsets WHERE group_id = '" + group + "'");
    }

    private static long query(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static long heapPeakMiB() {
        long peak = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                peak += pool.getPeakUsage().getUsed();
            }
        }
        return peak >> 20;
    }

    private static String loadavg() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static String rss() {
        StringBuilder b = new StringBuilder();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:") || line.startsWith("VmHWM:")) {
                    b.append(b.length() == 0 ? "" : ", ").append(line.replaceAll("\\s+", " "));
                }
            }
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
        return b.length() == 0 ? "unknown" : b.toString();
    }

}
