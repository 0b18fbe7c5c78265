package io.queen.timers.bridge;

import static io.queen.timers.bridge.BridgeTestSupport.longQuery;
import static io.queen.timers.bridge.BridgeTestSupport.verdictsBySource;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.HealthSettings;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.Backends;
import io.queen.timers.testkit.PerClass;
import io.queen.timers.testkit.TestKafka;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No wait of the bridge lasts for ever: a session that holds a timer row longer than bridge.lock.timeout,
 * and a PostgreSQL backend of the bridge stopped with SIGSTOP. While the obstacle lasts /health/ready says
 * so; once it goes, the bridge carries on by itself and every command has exactly one verdict.
 */
class BridgeStallIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Stack::shared);

    private static Consumer<ServiceSettings> stallSettings(String topic, String audit) {
        return s -> s.set(RouteSettings.COMMAND_TOPICS, List.of(topic)).set(CommonSettings.AUDIT_TOPIC, audit)
                .set(BridgeSettings.GROUP_ID, stack.get().uniqueName("g-" + topic + "-"))
                .set(BridgeSettings.LOCK_TIMEOUT, Duration.ofSeconds(1))
                .set(BridgeSettings.STATEMENT_TIMEOUT, Duration.ofSeconds(2))
                .set(CommonSettings.DB_SOCKET_TIMEOUT, Duration.ofSeconds(4))
                .set(HealthSettings.FAILING_AFTER, Duration.ofSeconds(1));
    }

    @Test
    void aSessionHoldingATimerRowLongerThanTheLockTimeoutDelaysTheBatchButLosesNothing() throws Exception {
        String topic = TestKafka.newTopic("cmd-lock", 1);
        String audit = TestKafka.newTopic("audit-lock", 1);
        try (BridgeMain bridge = Bridges.start(stack.get(), stallSettings(topic, audit), new SimpleMeterRegistry());
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            send(producer, topic, "lock.q", "held", Duration.ofHours(1), "txn-1");
            await().atMost(60, TimeUnit.SECONDS).until(() -> timers("lock.q") == 1);

            try (Connection holder = stack.get().owner().getConnection()) {
                holder.setAutoCommit(false);
                try (Statement st = holder.createStatement()) {
                    st.execute("SELECT 1 FROM queen.log_timers WHERE queue = 'lock.q' AND timer_key = 'held' FOR UPDATE");
                }
                send(producer, topic, "lock.q", "held", Duration.ofHours(2), "txn-2");
                send(producer, topic, "lock.q", "other", Duration.ofHours(1), "txn-3");
                await().atMost(30, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50))
                        .until(() -> problems(bridge).stream().anyMatch(p -> p.contains("lock timeout")));
                Thread.sleep(2_000);   // several more lock timeouts: still nothing applied, nothing skipped
                assertThat(timers("lock.q")).isEqualTo(1);
                assertThat(problems(bridge)).isNotEmpty();
                holder.rollback();
            }
            await().atMost(30, TimeUnit.SECONDS).until(() -> timers("lock.q") == 2
                    && longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE txn = 'txn-2'") == 1);
            await().atMost(10, TimeUnit.SECONDS).until(() -> problems(bridge).isEmpty());
        }
        assertExactlyOneVerdictPerCommand(audit, 3);
    }

    @Test
    void aBridgeBackendStoppedWithSigstopIsGivenUpAndTheBridgeResumesByItself() throws Exception {
        String topic = TestKafka.newTopic("cmd-stop", 1);
        String audit = TestKafka.newTopic("audit-stop", 1);
        try (BridgeMain bridge = Bridges.start(stack.get(), stallSettings(topic, audit), new SimpleMeterRegistry());
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            send(producer, topic, "stop.q", "first", Duration.ofHours(1), "txn-first");
            await().atMost(60, TimeUnit.SECONDS).until(() -> timers("stop.q") == 1);

            List<Integer> stopped = Backends.pids(stack.get().owner(), "queen-bridge");
            assertThat(stopped).as("the bridge's pool names its connections").isNotEmpty();
            Backends.stop(stopped);
            try {
                for (int i = 0; i < 20; i++) {
                    send(producer, topic, "stop.q", "k" + i, Duration.ofHours(1), "txn-" + i);
                }
                await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50)).until(() -> !problems(bridge).isEmpty());
            } finally {
                Backends.resume(stopped);   // before the bridge closes: its stop waits for the batch in hand
            }
            await().atMost(60, TimeUnit.SECONDS).until(() -> timers("stop.q") == 21);
            await().atMost(30, TimeUnit.SECONDS).until(() -> problems(bridge).isEmpty());
        }
        assertExactlyOneVerdictPerCommand(audit, 21);
    }

    private static void send(KafkaProducer<byte[], byte[]> producer, String topic, String queue, String key, Duration delay, String txn)
            throws Exception {
        producer.send(TimerCommand.schedule(queue, key).delay(delay).txn(txn).payload("{}").envelope(topic)).get();
    }

    private static long timers(String queue) throws Exception {
        return longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE queue = '" + queue + "'");
    }

    private static List<String> problems(BridgeMain bridge) {
        return bridge.health().report().problems();
    }

    private static void assertExactlyOneVerdictPerCommand(String audit, int commands) throws Exception {
        var verdicts = verdictsBySource(audit, stack.get().owner());
        assertThat(verdicts).hasSize(commands);
        assertThat(verdicts.values()).allSatisfy(v -> assertThat(v).hasSize(1));
    }
}
