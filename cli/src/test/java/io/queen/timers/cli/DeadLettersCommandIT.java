package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.cli.ServiceCommandsIT.Background;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.AuditTopicReader;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 27, point 4: `dead-letters list|show|replay|drop` against a bridge, the broker and PostgreSQL. The dead letters
 * are made by the sweeper's own function (queen.timer_dead_letter_v3) from timers the bridge staged.
 */
class DeadLettersCommandIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @Test
    void replayGoesThroughTheCommandTopicAndRemovesTheDeadLetterOnlyOnceTheDatabaseSeesTheTimerAgain() throws Exception {
        String commands = TestKafka.newTopic("dl-commands", 1);
        String audit = TestKafka.newTopic("dl-audit", 1);
        int port = Http.freePort();
        Map<String, String> env = BridgeEnv.of(db, commands, audit, port);
        try (Background bridge = Background.run(env, "bridge")) {
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() ->
                    assertThat(Http.get(port, "/health/ready")).satisfies(r -> assertThat(r.statusCode()).as(r.body()).isEqualTo(200)));
            for (int i = 1; i <= 3; i++) {
                Cli s = Cli.run(env, "schedule", "-q", "dl.q", "-k", "k" + i, "--txn", "t-" + i, "--delay", "1h",
                        "--payload", "{\"orderId\":" + i + "}", "--wait");
                assertThat(s.out()).as(s.err()).contains("verdict: scheduled");
            }
            // the sweeper's dead-letter, as after sweeper.max.attempts failures, under its claim
            String token = "0b5e55ed-0000-4000-8000-000000000001";
            execute("UPDATE queen.log_timers SET attempts = 5, last_error = 'downstream said no', claim_token = '" + token
                    + "', claimed_until = now() + interval '1 minute' WHERE queue = 'dl.q'");
            execute("SELECT count(*) FROM queen.timer_dead_letter_v3('[{\"tenant_id\":\"" + OffsetsCommandIT.DEFAULT_TENANT
                    + "\",\"queue\":\"dl.q\",\"timer_key\":\"k1\",\"claim_token\":\"" + token + "\"},{\"tenant_id\":\"" + OffsetsCommandIT.DEFAULT_TENANT
                    + "\",\"queue\":\"dl.q\",\"timer_key\":\"k2\",\"claim_token\":\"" + token + "\"},{\"tenant_id\":\"" + OffsetsCommandIT.DEFAULT_TENANT
                    + "\",\"queue\":\"dl.q\",\"timer_key\":\"k3\",\"claim_token\":\"" + token + "\"}]'::jsonb, 5)");

            Cli list = Cli.run(env, "dead-letters", "list", "-q", "dl.q", "--json");
            assertThat(list.exitCode()).as(list.err()).isZero();
            List<JsonNode> rows = list.out().lines().map(DeadLettersCommandIT::json).toList();
            assertThat(rows).extracting(r -> r.get("timerKey").asText()).containsExactlyInAnyOrder("k1", "k2", "k3");
            assertThat(rows).allSatisfy(r -> assertThat(r.get("error").asText()).isEqualTo("downstream said no"));
            String k1 = idOf(rows, "k1");
            String k2 = idOf(rows, "k2");
            String k3 = idOf(rows, "k3");
            Cli show = Cli.run(env, "dead-letters", "show", k1);
            assertThat(show.out()).contains("dl.q/k1", "txn t-1", "payload {\"orderId\": 1}");
            assertThat(Cli.run(env, "dead-letters", "show", "00000000-0000-0000-0000-0000000000ff").exitCode()).isEqualTo(3);

            // Issue 37, point 4: the topic comes from the database's record of the dead letter's tenant's topics. One
            // another tenant's bridge registered is refused, and so is one no bridge registered; nothing is sent.
            String otherTenants = TestKafka.newTopic("dl-tenant-b", 1);
            execute("INSERT INTO queen.bridge_topics (group_id, topic, tenant_id) VALUES ('tenant-b-bridge', '" + otherTenants
                    + "', '00000000-0000-0000-0000-00000000000b')");
            Cli foreign = Cli.run(env, "dead-letters", "replay", k1, "--reason", "try", "-t", otherTenants, "--wait", "3s");
            assertThat(foreign.exitCode()).isEqualTo(1);
            assertThat(foreign.err()).contains("stands for tenant 00000000-0000-0000-0000-00000000000b",
                    "dead letter " + k1 + " is tenant " + OffsetsCommandIT.DEFAULT_TENANT, "its command topics: " + commands);
            Cli unknown = Cli.run(env, "dead-letters", "replay", k1, "--reason", "try", "-t", TestKafka.newTopic("dl-unregistered", 1));
            assertThat(unknown.exitCode()).isEqualTo(1);
            assertThat(unknown.err()).contains("not a command topic any bridge registered");
            assertThat(endOffset(otherTenants)).as("nothing sent to tenant B's topic").isZero();
            assertThat(dlqRows()).isEqualTo(3);

            // No verdict (a topic of this tenant that no running bridge reads): the dead letter stays.
            String nobody = TestKafka.newTopic("dl-nobody", 1);
            execute("INSERT INTO queen.bridge_topics (group_id, topic, tenant_id) VALUES ('stopped-bridge', '" + nobody + "', '"
                    + OffsetsCommandIT.DEFAULT_TENANT + "')");
            Cli lost = Cli.run(env, "dead-letters", "replay", k1, "--reason", "try", "-t", nobody, "--wait", "3s");
            assertThat(lost.exitCode()).isEqualTo(1);
            assertThat(lost.err()).contains("no verdict", "is kept");
            assertThat(dlqRows()).isEqualTo(3);

            // Two topics of this tenant now: which one is the operator's to say (of the tenant's own).
            Cli ambiguous = Cli.run(env, "dead-letters", "replay", k1, "--reason", "x");
            assertThat(ambiguous.exitCode()).isEqualTo(1);
            assertThat(ambiguous.err()).contains("several command topics", "--topic");
            execute("DELETE FROM queen.bridge_topics WHERE group_id = 'stopped-bridge'");
            Cli replay = Cli.run(env, "dead-letters", "replay", k1, "--reason", "downstream fixed (INC-1)", "--delay", "1h");
            assertThat(replay.exitCode()).as(replay.err()).isZero();
            assertThat(replay.out()).contains("sent schedule dl.q/k1 (txn t-1)", "verdict: scheduled",
                    "dead letter " + k1 + " removed (timer pending)");
            assertThat(dlqRows()).isEqualTo(2);
            assertThat(one("SELECT txn || ' ' || attempts || ' ' || (convert_from(payload, 'UTF8')::jsonb = '{\"orderId\":1}'::jsonb)"
                    + " FROM queen.log_timers WHERE queue = 'dl.q' AND timer_key = 'k1'")).isEqualTo("t-1 0 true");
            assertThat(Cli.run(env, "dead-letters", "replay", k1, "--reason", "again").exitCode()).as("gone: not there").isEqualTo(3);

            // The key now holds another pending timer: a replay would replace it.
            Cli other = Cli.run(env, "schedule", "-q", "dl.q", "-k", "k3", "--txn", "t-3-new", "--delay", "1h", "--wait");
            assertThat(other.out()).contains("verdict: scheduled");
            Cli refused = Cli.run(env, "dead-letters", "replay", k3, "--reason", "x");
            assertThat(refused.exitCode()).isEqualTo(1);
            assertThat(refused.err()).contains("pending with another txn (t-3-new)");

            Cli drop = Cli.run(env, "dead-letters", "drop", k2, "--reason", "order 2 was refunded");
            assertThat(drop.exitCode()).as(drop.err()).isZero();
            assertThat(drop.out()).contains("dead letter " + k2 + " (dl.q/k2) dropped");
            assertThat(dlqRows()).isEqualTo(1);

            // The audit trail, as a consumer reads it: 3 + 1 + 1 scheduled, 3 dead_lettered, 2 dead_letter_removed.
            List<AuditEvent> events = AuditTopicReader.awaitEvents(audit, 10, Duration.ofSeconds(60));
            AuditEvent.Scheduled replayed = events.stream().filter(e -> e instanceof AuditEvent.Scheduled s && s.timerKey().equals("k1"))
                    .map(AuditEvent.Scheduled.class::cast).reduce((a, b) -> b).orElseThrow();
            List<AuditEvent.DeadLetterRemoved> removed = events.stream().filter(e -> e instanceof AuditEvent.DeadLetterRemoved)
                    .map(AuditEvent.DeadLetterRemoved.class::cast).toList();
            assertThat(removed).hasSize(2);
            assertThat(removed.get(0)).satisfies(r -> {
                assertThat(r.deadLetterId()).hasToString(k1);
                assertThat(r.how()).isEqualTo("replayed");
                assertThat(r.state()).isEqualTo("pending");
                assertThat(r.reason()).isEqualTo("downstream fixed (INC-1)");
                assertThat(r.verdictEventId()).isEqualTo(replayed.meta().eventId());
                assertThat(r.meta().traceId()).isNotNull().isEqualTo(replayed.meta().traceId());
                assertThat(r.by()).startsWith(db.user() + "@");
                assertThat(r.clientLabel()).contains("(queen-timers dead-letters replay)");
            });
            assertThat(removed.get(1)).satisfies(r -> {
                assertThat(r.timerKey()).isEqualTo("k2");
                assertThat(r.how()).isEqualTo("dropped");
                assertThat(r.state()).isNull();
                assertThat(r.reason()).isEqualTo("order 2 was refunded");
                assertThat(r.error()).isEqualTo("downstream said no");
            });
            assertThat(bridge.stop()).isZero();
        }
    }

    private static String idOf(List<JsonNode> rows, String key) {
        return rows.stream().filter(r -> r.get("timerKey").asText().equals(key)).findFirst().orElseThrow().get("id").asText();
    }

    private static JsonNode json(String line) {
        try {
            return Output.mapper().readTree(line);
        } catch (Exception e) {
            throw new AssertionError(line, e);
        }
    }

    private static long endOffset(String topic) throws Exception {
        org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(topic, 0);
        try (var admin = TestKafka.admin()) {
            return admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.latest())).partitionResult(tp).get().offset();
        }
    }

    private static long dlqRows() throws Exception {
        return Long.parseLong(one("SELECT count(*) FROM queen.log_dlq WHERE consumer_group = '__timer__'"));
    }

    static String one(String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            assertThat(rs.next()).as(sql).isTrue();
            return rs.getString(1);
        }
    }

    static void execute(String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
