package io.queen.timers.bridge;

import static io.queen.timers.bridge.BridgeTestSupport.storedOffsetSum;
import static io.queen.timers.bridge.BridgeTestSupport.verdictsBySource;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.client.command.Op;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import io.queen.timers.testkit.TestKafka;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Real crashes: the bridge runs as a separate JVM and is killed with SIGKILL (kill -9) while it
 * ingests. Afterwards the table must equal every command applied exactly once, in order, and every
 * source record must have exactly one verdict, the one the model gives.
 */
class BridgeCrashIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Stack::shared);

    static final int COMMANDS = 20_000;
    static final int KEYS = 2_000;

    final List<Process> children = new ArrayList<>();

    @AfterEach
    void killChildren() throws InterruptedException {
        for (Process p : children) {
            p.destroyForcibly();
            p.waitFor();
        }
    }

    @Test
    void killNineDuringIngestNeitherLosesNorReappliesACommand() throws Exception {
        String topic = TestKafka.newTopic("cmd-crash", 3);
        String audit = TestKafka.newTopic("audit", 1);
        String group = stack.get().uniqueName("g-crash-");
        Path file = Bridges.configFile(stack.get(), consuming(topic, audit, group));
        Workload w = Workload.generate("crash", topic, 1);

        Process first = startChild(file, "crash-1");
        Thread producer = w.produceSlowly();
        try {
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(20))
                    .until(() -> storedOffsetSum(stack.get().owner(), group) >= COMMANDS / 4);
            first.destroyForcibly(); // SIGKILL: no shutdown hook, no graceful anything
            first.waitFor();
            long atKill = storedOffsetSum(stack.get().owner(), group);
            assertThat(atKill).as("killed mid-ingest").isLessThan(COMMANDS);

            Process second = startChild(file, "crash-2");
            producer.join();
            await().atMost(Duration.ofSeconds(120)).until(() -> storedOffsetSum(stack.get().owner(), group) == COMMANDS);
            second.destroy(); // SIGTERM: graceful
            second.waitFor();
        } finally {
            producer.interrupt();
            producer.join();
        }
        BridgeEndToEndIT.assertExactlyOnce(w.model(), w.indexBySource, verdictsBySource(audit, stack.get().owner()), stack.get().owner(), "crash");
    }

    @Test
    void twoInstancesOnSixPartitionsOneKilledMidRunNeitherLosesNorReappliesACommand() throws Exception {
        String topic = TestKafka.newTopic("cmd-two", 6);
        String audit = TestKafka.newTopic("audit", 1);
        String group = stack.get().uniqueName("g-two-");
        Consumer<ServiceSettings> s = consuming(topic, audit, group);
        Path file = Bridges.configFile(stack.get(), s);
        Workload w = Workload.generate("two", topic, 2);

        Process child = startChild(file, "two-1");
        Path childLog = Path.of("target", "child-two-1.log");
        Thread producer;
        try (BridgeMain inProcess = Bridges.start(stack.get(), s, new SimpleMeterRegistry())) {
            await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(childLog).contains("consuming [" + topic));
            producer = w.produceSlowly();
            try {
                await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(20))
                        .until(() -> storedOffsetSum(stack.get().owner(), group) >= COMMANDS / 3);
                child.destroyForcibly();
                child.waitFor();
                assertThat(storedOffsetSum(stack.get().owner(), group)).as("killed mid-run").isLessThan(COMMANDS);
                producer.join();
                await().atMost(Duration.ofSeconds(120)).until(() -> storedOffsetSum(stack.get().owner(), group) == COMMANDS);
            } finally {
                producer.interrupt();
                producer.join();
            }
        }
        BridgeEndToEndIT.assertExactlyOnce(w.model(), w.indexBySource, verdictsBySource(audit, stack.get().owner()), stack.get().owner(), "two");
    }

    /** A bridge on {@code topic} as {@code group}, auditing to {@code audit}, in polls of 200 records (many batches). */
    private static Consumer<ServiceSettings> consuming(String topic, String audit, String group) {
        return s -> s.set(RouteSettings.COMMAND_TOPICS, List.of(topic)).set(CommonSettings.AUDIT_TOPIC, audit)
                .set(BridgeSettings.GROUP_ID, group).kafka("max.poll.records", 200);
    }

    private Process startChild(Path config, String name) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        File log = new File("target", "child-" + name + ".log");
        Process p = new ProcessBuilder(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), BridgeMain.class.getName(), "--config", config.toString())
                .redirectErrorStream(true).redirectOutput(log).start();
        children.add(p);
        return p;
    }

    /** 20,000 commands over 2,000 keys: schedule, reschedule and cancel mixed, deliverAt and delayMs mixed. */
    record Workload(String queue, String topic, List<TimerModel.Cmd> commands, List<ProducerRecord<byte[], byte[]>> records,
                    Map<String, Integer> indexBySource) {

        static Workload generate(String queue, String topic, long seed) {
            Random r = new Random(seed);
            Instant base = Instant.now().plus(1, ChronoUnit.DAYS).truncatedTo(ChronoUnit.MILLIS);
            long t0 = Instant.now().truncatedTo(ChronoUnit.SECONDS).toEpochMilli();
            List<TimerModel.Cmd> commands = new ArrayList<>(COMMANDS);
            List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(COMMANDS);
            for (int i = 0; i < COMMANDS; i++) {
                String key = "key-" + r.nextInt(KEYS);
                double d = r.nextDouble();
                long timestamp = t0 + i;
                byte[] value;
                TimerModel.Cmd c;
                if (d < 0.25) {
                    c = new TimerModel.Cmd(TimerModel.Kind.CANCEL, queue, key, null, null, null);
                    value = TimerCommand.cancel(queue, key).envelope(topic).value();
                } else {
                    Op op = d < 0.6 ? Op.SCHEDULE : Op.RESCHEDULE;
                    String txn = "t-" + i;
                    String payload = "{\"i\":" + i + "}";
                    if (r.nextBoolean()) {
                        Instant at = base.plusSeconds(r.nextInt(86_400));
                        c = new TimerModel.Cmd(TimerModel.Kind.SCHEDULE, queue, key, at, txn, payload);
                        value = TimerCommand.of(op, queue, key).at(at).txn(txn).payload(payload).envelope(topic).value();
                    } else {
                        long delay = 60_000L + r.nextInt(3_600_000);
                        c = new TimerModel.Cmd(TimerModel.Kind.SCHEDULE, queue, key, Instant.ofEpochMilli(timestamp + delay), txn, payload);
                        value = TimerCommand.of(op, queue, key).delay(Duration.ofMillis(delay)).txn(txn).payload(payload).envelope(topic).value();
                    }
                }
                commands.add(c);
                records.add(new ProducerRecord<>(topic, null, timestamp, WireFormat.keyBytes(queue, key), value));
            }
            return new Workload(queue, topic, commands, records, new ConcurrentHashMap<>());
        }

        TimerModel model() {
            return TimerModel.of(commands);
        }

        /** Sends every record, 200 every 40 ms (about 5,000/s), recording where each landed. */
        Thread produceSlowly() {
            Thread t = new Thread(() -> {
                try (KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
                    for (int from = 0; from < records.size(); from += 200) {
                        List<Future<RecordMetadata>> sends = new ArrayList<>();
                        int to = Math.min(records.size(), from + 200);
                        for (int i = from; i < to; i++) {
                            sends.add(producer.send(records.get(i)));
                        }
                        producer.flush();
                        for (int i = from; i < to; i++) {
                            RecordMetadata m = sends.get(i - from).get();
                            indexBySource.put(topic + "/" + m.partition() + "@" + m.offset(), i);
                        }
                        Thread.sleep(40);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "test-producer");
            t.start();
            return t;
        }
    }
}
