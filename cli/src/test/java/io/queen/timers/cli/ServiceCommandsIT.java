package io.queen.timers.cli;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.ops.ServiceHost;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@code bridge} and {@code sweeper} subcommands as an operator runs them (settings from the
 * environment), scraped as a monitoring system would: /health/live, /health/ready, /metrics.
 */
class ServiceCommandsIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @Test
    void bridgeServesHealthAndItsMetricsAndStopsOnInterrupt() throws Exception {
        String commands = TestKafka.newTopic("ops-commands", 1);
        String audit = TestKafka.newTopic("ops-audit", 1);
        int port = Http.freePort();
        Map<String, String> env = env(commands, audit, port);

        try (Background bridge = Background.run(env, "bridge")) {
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() ->
                    assertThat(Http.get(port, "/health/ready")).satisfies(r -> assertThat(r.statusCode()).as(r.body()).isEqualTo(200)));
            assertThat(Http.status(port, "/health/live")).isEqualTo(200);
            assertThat(Http.get(port, "/health/ready").body()).contains("database: ok", "kafka: ok");

            Cli sent = Cli.run(env, "schedule", "-t", commands, "-q", "ops.q", "-k", "k1", "--delay", "1h", "--wait");
            assertThat(sent.exitCode()).as(sent.err()).isZero();
            assertThat(sent.out()).contains("verdict: scheduled, deliver at ");
            Cli bad = Cli.run(env, "schedule", "-t", commands, "-q", "bad queue!", "-k", "k1", "--delay", "1h", "--wait", "--json");
            assertThat(bad.exitCode()).as("a rejected command fails the script").isEqualTo(1);
            assertThat(Output.mapper().readTree(bad.out()).get("reason").asText()).isEqualTo("bad_queue");
            Cli cancel = Cli.run(env, "cancel", "-t", commands, "-q", "ops.q", "-k", "k1", "--wait=20s");
            assertThat(cancel.out()).contains("verdict: cancelled");

            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(Http.get(port, "/metrics").body())
                    .contains("queen_timers_commands_total{reason=\"none\",verdict=\"scheduled\"} 1.0")
                    .contains("queen_timers_commands_total{reason=\"none\",verdict=\"cancelled\"} 1.0")
                    .containsPattern("queen_timers_commands_total\\{reason=\"bad_queue\",verdict=\"rejected\"\\} 1.0"));
            String metrics = Http.get(port, "/metrics").body();
            System.out.println("[bridge /metrics]\n" + metrics);
            assertThat(metrics).contains(
                    "queen_timers_bridge_ingest_lag_records ",
                    "queen_timers_audit_outbox_backlog",
                    "queen_timers_bridge_batch_apply_seconds");
            assertThat(bridge.stop()).isZero();
        }
    }

    @Test
    void sweeperServesHealthAndItsMetricsAndStopsOnInterrupt() throws Exception {
        int port = Http.freePort();
        Map<String, String> env = env(TestKafka.newTopic("ops-commands", 1), TestKafka.newTopic("ops-audit", 1), port);

        try (Background sweeper = Background.run(env, "sweeper")) {
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() ->
                    assertThat(Http.get(port, "/health/ready")).satisfies(r -> assertThat(r.statusCode()).as(r.body()).isEqualTo(200)));
            assertThat(Http.status(port, "/health/live")).isEqualTo(200);
            String metrics = Http.get(port, "/metrics").body();
            System.out.println("[sweeper /metrics]\n" + metrics);
            assertThat(metrics).contains(
                    "queen_timers_fired_total{result=",
                    "queen_timers_fire_lateness_seconds_bucket{",
                    "queen_timers_due ",
                    "queen_timers_oldest_late_seconds ",
                    "queen_timers_fire_failures_total{class=\"transient\"}",
                    "queen_timers_fire_failures_total{class=\"permanent\"}",
                    "queen_timers_dead_lettered_total ",
                    "queen_timers_claim_duration_seconds_count",
                    "queen_timers_fire_duration_seconds_count",
                    "queen_timers_audit_outbox_backlog");
            assertThat(sweeper.stop()).isZero();
        }
    }

    @Test
    void aServiceThatStopsOnItsOwnMakesTheProcessExitNonZero() {
        var config = io.queen.timers.core.config.ConfigLoader.load(io.queen.timers.core.config.CommonSettings.definition(), null,
                env("t", "a", 0));
        ServiceHost host = ServiceHost.start("bridge", CommonSettings.from(config),
                deps -> new ServiceHost.Running(() -> {}, () -> {}));
        org.assertj.core.api.Assertions.assertThatThrownBy(host::runUntilStopped)
                .hasMessage("bridge stopped on its own (see the log above); exiting so it can be restarted");
    }

    @Test
    void aBadSettingStopsTheServiceWithOneLine() {
        Map<String, String> env = new HashMap<>(env("t", "a", 0));
        env.put("QUEEN_JDBC_POOL_SIZE", "1");
        Cli r = Cli.run(env, "bridge");
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("error: setting jdbc.pool.size = 1 is out of range: allowed 3 .. 200" + System.lineSeparator());
    }

    static Map<String, String> env(String commands, String audit, int port) {
        return BridgeEnv.of(db, commands, audit, port);
    }

    /** A subcommand running on its own thread, stopped by interrupting it (as SIGTERM would via the shutdown hook). */
    record Background(Thread thread, AtomicInteger code, StringWriter err) implements AutoCloseable {

        static Background run(Map<String, String> env, String... args) {
            AtomicInteger code = new AtomicInteger(-1);
            StringWriter err = new StringWriter();
            Thread t = new Thread(() -> code.set(QueenTimers.commandLine(new QueenTimers(env),
                    new PrintWriter(new StringWriter(), true), new PrintWriter(err, true)).execute(args)), "test-" + args[0]);
            t.start();
            return new Background(t, code, err);
        }

        int stop() throws InterruptedException {
            thread.interrupt();
            thread.join(20_000);
            return code.get();
        }

        @Override
        public void close() throws InterruptedException {
            if (thread.isAlive()) {
                stop();
            }
        }
    }
}
