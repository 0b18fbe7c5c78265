package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.cli.ServiceCommandsIT.Background;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.AuditTopicReader;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Issue 27, point 4: `audit tail` reads what a bridge's relay published, filtered by queue and type, and follows it. */
class AuditTailCommandIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @Test
    void auditTailFiltersByQueueAndTypeAndFollowsNewEvents() throws Exception {
        String commands = TestKafka.newTopic("tail-commands", 1);
        String audit = TestKafka.newTopic("tail-audit", 1);
        int port = Http.freePort();
        Map<String, String> env = BridgeEnv.of(db, commands, audit, port);
        try (Background bridge = Background.run(env, "bridge")) {
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() ->
                    assertThat(Http.get(port, "/health/ready")).satisfies(r -> assertThat(r.statusCode()).as(r.body()).isEqualTo(200)));
            Cli.run(env, "schedule", "-q", "tail.a", "-k", "k1", "--delay", "1h", "--wait");
            Cli.run(env, "schedule", "-q", "tail.b", "-k", "k1", "--delay", "1h", "--wait");
            Cli.run(env, "cancel", "-q", "tail.a", "-k", "k1", "--wait");
            Cli.run(env, "schedule", "-q", "bad queue!", "-k", "k1", "--delay", "1h", "--wait");
            AuditTopicReader.awaitEvents(audit, 4, Duration.ofSeconds(60));

            Cli a = Cli.run(env, "audit", "tail", "--from-beginning", "--queue", "tail.a", "--json");
            assertThat(a.exitCode()).as(a.err()).isZero();
            List<JsonNode> events = a.out().lines().map(AuditTailCommandIT::json).toList();
            assertThat(events).extracting(e -> e.get("type").asText()).containsExactly("scheduled", "cancelled");
            assertThat(events).allSatisfy(e -> assertThat(e.get("queue").asText()).isEqualTo("tail.a"));

            Cli rejected = Cli.run(env, "audit", "tail", "--type", "rejected");
            assertThat(rejected.exitCode()).as(rejected.err()).isZero();
            assertThat(rejected.out().lines().toList()).singleElement().asString().contains("  rejected  ", "bad_queue");
            assertThat(Cli.run(env, "audit", "tail", "--last", "1").out().lines().toList()).singleElement().asString().contains("rejected");
            Cli unknown = Cli.run(env, "audit", "tail", "--type", "fried");
            assertThat(unknown.exitCode()).isEqualTo(1);
            assertThat(unknown.err()).contains("not an audit event type", "dead_letter_removed");

            StringWriter out = new StringWriter();
            AtomicInteger code = new AtomicInteger(-1);
            Thread follow = new Thread(() -> code.set(QueenTimers.commandLine(new QueenTimers(env), new PrintWriter(out, true),
                    new PrintWriter(new StringWriter(), true)).execute("audit", "tail", "--follow", "--last", "0", "--queue", "tail.c")), "tail");
            follow.start();
            Thread.sleep(2_000); // assigned and at the end before the next event is written
            Cli.run(env, "schedule", "-q", "tail.b", "-k", "k2", "--delay", "1h", "--wait");
            Cli.run(env, "schedule", "-q", "tail.c", "-k", "k9", "--delay", "1h", "--txn", "followed", "--wait");
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(out.toString()).contains("  scheduled  tail.c/k9  txn followed"));
            follow.interrupt();
            follow.join(20_000);
            assertThat(follow.isAlive()).isFalse();
            assertThat(code.get()).isEqualTo(130);
            assertThat(out.toString().lines().toList()).hasSize(1);
            assertThat(bridge.stop()).isZero();
        }
    }

    private static JsonNode json(String line) {
        try {
            return Output.mapper().readTree(line);
        } catch (Exception e) {
            throw new AssertionError(line, e);
        }
    }
}
