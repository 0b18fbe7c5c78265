package io.queen.timers.bridge;

import static io.queen.timers.bridge.BridgeTestSupport.longQuery;
import static io.queen.timers.bridge.BridgeTestSupport.storedOffsetSum;
import static io.queen.timers.bridge.BridgeTestSupport.verdictsBySource;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.config.HealthSettings;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import io.queen.timers.testkit.TestKafka;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * "This record" against "the world": a database error caused by one record's values is that record's
 * {@code rejected}/{@code internal} verdict and the rest of its batch is applied; an outage-class error
 * is nobody's verdict and the batch waits. The errors are raised by a trigger, in the real database,
 * keyed on the timer key, so exactly the chosen records meet them.
 */
class RecordIsolationIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Stack::shared);

    @BeforeAll
    static void poisonTrigger() throws Exception {
        try (Connection c = stack.get().owner().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE public.world (broken BOOLEAN NOT NULL)");
            st.execute("INSERT INTO public.world VALUES (false)");
            st.execute("""
                    CREATE FUNCTION public.poison() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF NEW.timer_key LIKE 'poison-%' THEN
                            RAISE EXCEPTION 'value out of range for %', NEW.timer_key USING ERRCODE = '22003';
                        END IF;
                        IF NEW.timer_key LIKE 'busy-%' AND (SELECT broken FROM public.world) THEN
                            RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001';
                        END IF;
                        RETURN NEW;
                    END $$""");
            // the trigger runs as the bridge's login, a member of queen_bridge and nothing more: it may read the switch
            st.execute("GRANT SELECT ON public.world TO " + BridgeMain.SERVICE.loginGroup());
            st.execute("CREATE TRIGGER poison BEFORE INSERT OR UPDATE ON queen.log_timers FOR EACH ROW EXECUTE FUNCTION public.poison()");
        }
    }

    @Test
    void aRecordWhoseValuesFailTheApplyIsRejectedInternalAndTheRestOfItsBatchIsApplied() throws Exception {
        String topic = TestKafka.newTopic("cmd-poison", 2);
        String group = stack.get().uniqueName("g-poison-");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        int n = 400;
        try (KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            for (int i = 0; i < n; i++) { // sent before the bridge starts: one poll takes many records, poisons among them
                String key = (i == 17 || i == 250 || i == 251 ? "poison-" : "ok-") + i;
                producer.send(TimerCommand.schedule("iso", key).delay(Duration.ofHours(1)).txn("t" + i).payload("{\"i\":" + i + "}").envelope(topic));
            }
        }
        try (BridgeMain bridge = Bridges.start(stack.get(), consuming(topic, group), registry)) {
            await().atMost(Duration.ofSeconds(90)).until(() -> storedOffsetSum(stack.get().owner(), group) == n);
            assertThat(registry.counter("queen.timers.bridge.batch.isolations").count()).as("batches split").isPositive();
            assertThat(bridge.health().report().ready()).as(bridge.health().report().text()).isTrue();
        }
        Map<String, List<JsonNode>> verdicts = new java.util.HashMap<>(verdictsBySource("none-" + UUID.randomUUID(), stack.get().owner()));
        verdicts.keySet().removeIf(source -> !source.startsWith(topic + "/")); // the other test's verdicts share the outbox
        assertThat(verdicts).hasSize(n);
        assertThat(verdicts.values()).allSatisfy(v -> assertThat(v).hasSize(1));
        List<JsonNode> internal = verdicts.values().stream().map(v -> v.get(0)).filter(e -> e.get("type").asText().equals("rejected")).toList();
        assertThat(internal).hasSize(3).allSatisfy(e -> {
            assertThat(e.get("reason").asText()).isEqualTo("internal");
            assertThat(e.get("error").asText()).contains("22003").contains("value out of range for poison-");
        });
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE queue = 'iso'")).isEqualTo(n - 3);
    }

    @Test
    void anOutageClassErrorJudgesNoRecordTheBatchWaitsAndResumes() throws Exception {
        String topic = TestKafka.newTopic("cmd-busy", 1);
        String group = stack.get().uniqueName("g-busy-");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        setWorldBroken(true);
        try (BridgeMain bridge = Bridges.start(stack.get(), consuming(topic, group).andThen(s -> s.set(HealthSettings.FAILING_AFTER,
                        Duration.ofSeconds(2))), registry);
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            for (int i = 0; i < 20; i++) {
                producer.send(TimerCommand.schedule("busy", "busy-" + i).delay(Duration.ofHours(1)).txn("t").payload("1").envelope(topic));
            }
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> registry.counter("queen.timers.bridge.batch.retries").count() >= 2);
            assertThat(storedOffsetSum(stack.get().owner(), group)).isZero();
            await().atMost(Duration.ofSeconds(60)).until(() -> !bridge.health().report().ready()); // after health.failing.after
            setWorldBroken(false);
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 20);
        }
        assertThat(registry.counter("queen.timers.bridge.batch.isolations").count()).isZero();
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE queue = 'busy'")).isEqualTo(20);
    }

    /** A bridge on {@code topic} as {@code group}, its verdicts left in the outbox (the relay off), where the tests read them. */
    private static Consumer<ServiceSettings> consuming(String topic, String group) {
        return s -> s.set(RouteSettings.COMMAND_TOPICS, List.of(topic)).set(BridgeSettings.GROUP_ID, group)
                .set(AuditSettings.RELAY_ENABLED, false);
    }

    private static void setWorldBroken(boolean broken) throws Exception {
        try (Connection c = stack.get().owner().getConnection(); Statement st = c.createStatement()) {
            st.execute("UPDATE public.world SET broken = " + broken);
        }
    }
}
