package io.queen.timers.bridge;

import static io.queen.timers.bridge.BridgeTestSupport.longQuery;
import static io.queen.timers.bridge.BridgeTestSupport.outbox;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import io.queen.timers.testkit.TestKafka;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 24, point 8, through the real bridge, broker and PostgreSQL: a back-dated timer is ordered no earlier than its
 * staging, and a tenant cannot hold more than tenant.max.pending timers (tenant_quota). The claim's side is ClaimIT.
 */
class TenantFairnessEndToEndIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Stack::shared);

    static final String FLOODER = "00000000-0000-0000-0000-000000000001";
    static final String QUIET = "6a1f0000-0000-4000-8000-0000000000b2";
    static final Instant EPOCH_ISH = Instant.parse("1970-01-01T00:00:01Z");

    @Test
    void aBackDatedTimerIsVisibleNoEarlierThanItsStagingAndATenantStopsAtItsQuota() throws Exception {
        String a = TestKafka.newTopic("cmd-flood", 1);
        String b = TestKafka.newTopic("cmd-quiet", 1);
        long before = longQuery(stack.get().owner(), "SELECT floor(extract(epoch FROM now()) * 1000)::bigint");
        try (BridgeMain bridge = Bridges.start(stack.get(), s -> s.set(RouteSettings.COMMAND_TOPICS, List.of(a, b))
                        .set(BridgeSettings.GROUP_ID, stack.get().uniqueName("g-fair-"))
                        .topic(a, "tenant", FLOODER).topic(b, "tenant", QUIET)
                        .set(AuditSettings.RELAY_ENABLED, false) // the verdicts stay in the outbox, where this test reads them
                        .set(BridgeSettings.TENANT_MAX_PENDING, 5), new SimpleMeterRegistry());
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            for (int i = 1; i <= 7; i++) {   // 5 fit, the 6th and 7th new keys do not
                producer.send(TimerCommand.schedule("flood", "k" + i).at(EPOCH_ISH).txn("t" + i).payload("{}").envelope(a));
            }
            producer.send(TimerCommand.reschedule("flood", "k1").at(EPOCH_ISH).txn("t1b").payload("{}").envelope(a)); // staged key: passes
            producer.send(TimerCommand.cancel("flood", "k2").envelope(a));                                           // 4 left
            producer.send(TimerCommand.schedule("flood", "k8").at(EPOCH_ISH).txn("t8").payload("{}").envelope(a));   // fits again
            producer.send(TimerCommand.schedule("quiet", "q1").at(Instant.now().plus(1, ChronoUnit.HOURS)).txn("q").payload("{}")
                    .envelope(b)); // the quota is per tenant
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> outbox(stack.get().owner()).size() == 11);
        }

        List<JsonNode> events = outbox(stack.get().owner());
        assertThat(events.stream().filter(e -> e.get("tenant").asText().equals(FLOODER))
                .map(e -> e.get("type").asText() + (e.has("reason") ? " " + e.get("reason").asText() : "")))
                .containsExactly("scheduled", "scheduled", "scheduled", "scheduled", "scheduled",
                        "rejected tenant_quota", "rejected tenant_quota", "rescheduled", "cancelled", "scheduled");
        assertThat(events.stream().filter(e -> e.get("tenant").asText().equals(QUIET)).map(e -> e.get("type").asText()))
                .containsExactly("scheduled");
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE tenant_id = '" + FLOODER + "'")).isEqualTo(5);

        // deliver_at stays what the producer said; visible_at is no earlier than the staging
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE tenant_id = '" + FLOODER + "'"
                + " AND deliver_at = timestamptz '1970-01-01 00:00:01+00'")).isEqualTo(5);
        assertThat(longQuery(stack.get().owner(), "SELECT floor(extract(epoch FROM min(visible_at)) * 1000)::bigint FROM queen.log_timers"
                + " WHERE tenant_id = '" + FLOODER + "'")).isGreaterThanOrEqualTo(before);
        // ... and nobody holds them: a staged back-dated timer is due, and cancellable
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE tenant_id = '" + FLOODER + "'"
                + " AND claim_token IS NULL AND queen.timer_state_v1(claim_token, claimed_until, visible_at, now()) = 'due'")).isEqualTo(5);
    }
}
