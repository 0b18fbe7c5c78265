package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.cli.ServiceCommandsIT.Background;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.embedded.EmbeddedPostgresServer;
import io.queen.timers.embedded.EmbeddedPostgresServer.Durability;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * PostgreSQL restarts 10 times (-Drestarts.count=N for more) at seeded random moments, while a bridge and a sweeper start (the services are
 * restarted too, and PostgreSQL goes down a random while into their start-up) or while they work (timers
 * scheduled through Kafka and fired all along). After each restart both /health/ready answer 200 within
 * {@code health.failing.after} plus one probe of the database coming back, and no pool keeps a connection:
 * each pool's active connections (hikaricp_connections_active on /metrics) come back to what its live holders
 * hold (the connection the active relay holds with its lease). At the end every timer scheduled fired exactly once.
 *
 * <p>The seed is printed; {@code -Drestarts.seed=N} runs the same moments again.
 */
class PostgresRestartsIT {

    // ~4 s a restart; the fault harness (faults/run, in .ci/run) restarts PostgreSQL under load besides
    private static final int RESTARTS = Integer.getInteger("restarts.count", 10);
    private static final Duration FAILING_AFTER = Duration.ofSeconds(3);
    /** StandardReadiness probes every 5 s; one probe may start just before PostgreSQL is back. */
    private static final Duration PROBE_EVERY = Duration.ofSeconds(5);
    /**
     * A connection attempt under way when PostgreSQL went down can take the connect timeout to give up (a login
     * the stopping server never answers), and a pool adds one connection at a time.
     */
    private static final Duration CONNECT = SessionTimeouts.CONNECT;
    /** A probe's own run and a loop's cycle after its pause; a start-up round also validates the schema. */
    private static final Duration SLACK = Duration.ofSeconds(3);
    private static final Duration READY_WITHIN = FAILING_AFTER.plus(PROBE_EVERY).plus(CONNECT).plus(SLACK);
    private static final Pattern ACTIVE = Pattern.compile("^hikaricp_connections_active\\{pool=\"([^\"]+)\"[^}]*} ([0-9.eE+-]+)$",
            Pattern.MULTILINE);
    private static final Pattern RELAY_ACTIVE = Pattern.compile("^queen_timers_audit_relay_active(?:\\{[^}]*})? ([0-9.eE+-]+)$",
            Pattern.MULTILINE);

    /** The pools the relay takes its lock connection from; every other pool (probes, migration) holds nothing between calls. */
    private static final Set<String> MAIN_POOLS = Set.of("queen-bridge", "queen-sweeper");

    @TempDir
    Path dir;

    @Test
    void restartsAtRandomMomentsOfStartUpAndWorkLeaveBothServicesReadyNoConnectionKeptAndEveryTimerFiredOnce() throws Exception {
        long seed = Long.getLong("restarts.seed", System.nanoTime());
        System.out.println("[PostgresRestartsIT] seed " + seed + " (rerun with -Drestarts.seed=" + seed + ")");
        Random random = new Random(seed);
        int pgPort = Http.freePort();
        String url = "jdbc:postgresql://127.0.0.1:" + pgPort + "/postgres";
        Path data = dir.resolve("pg");
        int bridgePort = Http.freePort();
        int sweeperPort = Http.freePort();
        String topic = TestKafka.newTopic("restarts-commands", 2);
        String auditTopic = TestKafka.newTopic("restarts-audit", 1);
        EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data, pgPort, Durability.RELAXED, false);
        Background bridge = null;
        Background sweeper = null;
        Producer producer = new Producer(topic, random.nextLong());
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        ds.setUser(EmbeddedPostgresServer.USER);
        try {
            bridge = Background.run(env(url, bridgePort, topic, auditTopic), "bridge");
            sweeper = Background.run(env(url, sweeperPort, topic, auditTopic), "sweeper");
            awaitReady(Duration.ofSeconds(120), bridgePort, sweeperPort);
            producer.start();
            List<String> rounds = new ArrayList<>();
            for (int round = 1; round <= RESTARTS; round++) {
                boolean startUp = random.nextInt(4) == 0;
                long intoIt = random.nextInt(startUp ? 3_000 : 2_000);
                long down = random.nextInt(1_000);
                if (startUp) {
                    assertThat(bridge.stop()).as("bridge exit code").isZero();
                    assertThat(sweeper.stop()).as("sweeper exit code").isZero();
                    bridge = Background.run(env(url, bridgePort, topic, auditTopic), "bridge");
                    sweeper = Background.run(env(url, sweeperPort, topic, auditTopic), "sweeper");
                }
                Thread.sleep(intoIt); // the random moment is the point: PostgreSQL goes away wherever the services are then
                pg.close();
                Thread.sleep(down);
                pg = EmbeddedPostgresServer.start(data, pgPort, Durability.RELAXED, false);
                long back = System.nanoTime();
                awaitReady(READY_WITHIN, bridgePort, sweeperPort);
                long readyMs = (System.nanoTime() - back) / 1_000_000;
                // ready is not enough: a timer scheduled now goes through the bridge's and the sweeper's pools
                String marker = producer.scheduleNow("marker-" + round);
                await().atMost(READY_WITHIN).pollInterval(Duration.ofMillis(200))
                        .until(() -> LogContents.txnCounts(ds).containsKey(marker));
                long firedMs = (System.nanoTime() - back) / 1_000_000;
                awaitNoConnectionKept(bridgePort, sweeperPort);
                assertThat(bridge.thread().isAlive()).as("bridge alive after round %d", round).isTrue();
                assertThat(sweeper.thread().isAlive()).as("sweeper alive after round %d", round).isTrue();
                String line = "round " + round + ": " + (startUp ? "start-up" : "work") + ", down " + intoIt + " ms into it for " + down
                        + " ms, both ready " + readyMs + " ms after PostgreSQL was back (bound " + READY_WITHIN.toMillis()
                        + " ms), a timer scheduled then fired at " + firedMs + " ms";
                rounds.add(line);
                System.out.println("[PostgresRestartsIT] " + line);
            }
            producer.stop();
            assertThat(producer.failures()).as("sends the broker refused").isEmpty();
            Set<String> sent = producer.sent();
            assertThat(sent).hasSizeGreaterThan(RESTARTS);
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
                    assertThat(LogContents.txnCounts(ds).keySet()).containsAll(sent));
            Map<String, Integer> fired = LogContents.txnCounts(ds);
            assertThat(fired.keySet()).containsExactlyInAnyOrderElementsOf(sent);
            assertThat(fired).allSatisfy((txn, times) -> assertThat(times).as("fires of %s", txn).isOne());
            awaitNoConnectionKept(bridgePort, sweeperPort);
            System.out.println("[PostgresRestartsIT] seed " + seed + ": " + sent.size() + " timers fired once each across " + RESTARTS
                    + " restarts");
            assertThat(bridge.stop()).isZero();
            assertThat(sweeper.stop()).isZero();
        } finally {
            producer.close();
            if (bridge != null) {
                bridge.close();
            }
            if (sweeper != null) {
                sweeper.close();
            }
            pg.close();
        }
    }

    private static void awaitReady(Duration within, int... ports) {
        for (int port : ports) {
            await().atMost(within).pollInterval(Duration.ofMillis(100)).ignoreExceptions().untilAsserted(() -> {
                var ready = Http.get(port, "/health/ready");
                assertThat(ready.statusCode()).as("port %d: %s", port, ready.body()).isEqualTo(200);
            });
        }
    }

    /**
     * Every pool's active connections come back to what is held on purpose: nothing in the probe pools, the
     * connection the active relay holds with its lease in the main pool of the service whose relay is active. A
     * connection kept on an error path stays active for ever, so a wait of a few seconds tells it from work in progress.
     */
    private static void awaitNoConnectionKept(int... ports) {
        for (int port : ports) {
            await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                String metrics = Http.get(port, "/metrics").body();
                Map<String, Double> active = new HashMap<>();
                Matcher m = ACTIVE.matcher(metrics);
                while (m.find()) {
                    active.put(m.group(1), Double.parseDouble(m.group(2)));
                }
                Matcher r = RELAY_ACTIVE.matcher(metrics);
                double relay = r.find() ? Double.parseDouble(r.group(1)) : 0;
                assertThat(active).as("port %d pools", port).isNotEmpty();
                active.forEach((pool, n) -> assertThat(n).as("port %d: active connections of %s (relay active: %s)", port, pool, relay)
                        .isEqualTo(MAIN_POOLS.contains(pool) ? relay : 0));
            });
        }
    }

    private static Map<String, String> env(String url, int httpPort, String topic, String auditTopic) {
        Map<String, String> env = new HashMap<>();
        env.put("QUEEN_JDBC_URL", url);
        env.put("QUEEN_JDBC_USER", EmbeddedPostgresServer.USER);
        env.put("QUEEN_DB_ROLE_CHECK", "false"); // the service connects as the superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        env.put("QUEEN_JDBC_PASSWORD", "");
        env.put("QUEEN_KAFKA_BOOTSTRAP", TestKafka.bootstrapServers());
        env.put("QUEEN_COMMAND_TOPICS", topic);
        env.put("QUEEN_BRIDGE_START_POSITION", "earliest"); // the test's own topic: commands sent before the first join are applied
        env.put("QUEEN_AUDIT_TOPIC", auditTopic);
        env.put("QUEEN_HTTP_PORT", Integer.toString(httpPort));
        env.put("QUEEN_HTTP_BIND_ADDRESS", "127.0.0.1");
        env.put("QUEEN_HEALTH_FAILING_AFTER", FAILING_AFTER.toSeconds() + "s");
        env.put("QUEEN_DB_RETRY_BACKOFF_MAX", "1s");
        // a claim a restart interrupted comes back soon, so the end of the test does not wait for a long lease
        env.put("QUEEN_SWEEPER_LEASE", "4s");
        env.put("QUEEN_SWEEPER_IDLE_MAX", "1s");
        return env;
    }

    /** Schedules timers due within two seconds, 20 a second, on its own thread; every one acknowledged is counted. */
    private static final class Producer {
        private final String topic;
        private final Set<String> sent = ConcurrentHashMap.newKeySet();
        private final List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final AtomicBoolean running = new AtomicBoolean();
        private Thread thread;

        private final long seed;

        Producer(String topic, long seed) {
            this.topic = topic;
            this.seed = seed;
        }

        void start() {
            running.set(true);
            thread = new Thread(this::run, "restarts-producer");
            thread.start();
        }

        private final KafkaProducer<byte[], byte[]> kafka = TestKafka.commandProducer();

        private void run() {
            Random delays = new Random(seed);
            try {
                for (int i = 0; running.get(); i++) {
                    schedule("k" + i, delays.nextInt(2_000));
                    Thread.sleep(50);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Schedules timer {@code key}, due at once, and returns its txn once the broker acknowledged it. */
        String scheduleNow(String key) throws Exception {
            String txn = schedule(key, 0);
            kafka.flush();
            return txn;
        }

        private String schedule(String key, int delayMs) {
            String txn = "restart-" + key;
            String value = "{\"op\":\"schedule\",\"queue\":\"restarts\",\"timerKey\":\"" + key + "\",\"delayMs\":" + delayMs
                    + ",\"txn\":\"" + txn + "\",\"payload\":{\"key\":\"" + key + "\"}}";
            kafka.send(new ProducerRecord<>(topic, WireFormat.keyBytes("restarts", key), value.getBytes(StandardCharsets.UTF_8)),
                    (meta, error) -> {
                        if (error == null) {
                            sent.add(txn);
                        } else {
                            failures.add(txn + ": " + error);
                        }
                    });
            return txn;
        }

        void stop() throws InterruptedException {
            running.set(false);
            if (thread != null) {
                thread.join(30_000);
            }
            kafka.flush();
        }

        void close() throws InterruptedException {
            stop();
            kafka.close();
        }

        Set<String> sent() {
            return sent;
        }

        List<String> failures() {
            return failures;
        }
    }
}
