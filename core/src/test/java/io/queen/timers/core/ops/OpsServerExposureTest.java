package io.queen.timers.core.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.queen.timers.core.config.HealthSettings;
import io.queen.timers.core.health.Health;
import io.queen.timers.core.health.LoopProgress;
import io.queen.timers.core.health.ReadinessCheck;
import java.io.OutputStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The ops endpoint on a network it does not trust: connections that send nothing or half a request do not
 * stop /health/live and /health/ready, and the readiness body carries database error text only to loopback.
 */
class OpsServerExposureTest {

    static final String FAILING = "every cycle failed since 2026-06-01T12:00:00Z (7 cycles): SQLSTATE 42501: ERROR: permission denied for function timer_fire_v2";
    static final String UNREACHABLE = "unreachable: FATAL: password authentication failed for user \"queen\"";

    static Health health() {
        Health health = new Health(new HealthSettings(Duration.ofMinutes(1), Duration.ofMinutes(1)), Clock.systemUTC());
        health.add(ReadinessCheck.of("sweep-0", () -> Optional.of(FAILING)));
        health.add(ReadinessCheck.of("database", () -> Optional.of(UNREACHABLE)));
        health.add(ReadinessCheck.of("kafka", Optional::empty));
        return health;
    }

    @Test
    void slowClientsDoNotStopLivenessOrReadiness() throws Exception {
        List<Socket> stalled = new ArrayList<>();
        try (OpsServer ops = OpsServer.start("127.0.0.1", 0, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), health())) {
            for (int i = 0; i < 12; i++) {
                Socket s = new Socket("127.0.0.1", ops.port());
                stalled.add(s);
                if (i % 2 == 1) {
                    OutputStream out = s.getOutputStream();   // half a request line, then nothing
                    out.write("GET /health/rea".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
            }
            Thread.sleep(300); // the half requests have reached the server's threads
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            for (String path : List.of("/health/live", "/health/ready", "/metrics")) {
                long t0 = System.nanoTime();
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ops.port() + path))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as(path).isEqualTo(path.equals("/health/ready") ? 503 : 200);
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).as(path).isLessThan(Duration.ofSeconds(2));
            }
            // and the stalled connections are closed by the server (maxReqTime 2 s, swept every second)
            for (Socket s : stalled) {
                s.setSoTimeout(6_000);
                assertThat(s.getInputStream().read()).as("a stalled connection is closed by the server").isEqualTo(-1);
            }
        } finally {
            for (Socket s : stalled) {
                s.close();
            }
        }
    }

    @Test
    void readinessDetailsGoOnlyToLoopback() throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        try (OpsServer ops = OpsServer.start("0.0.0.0", 0, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), health())) {
            String local = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ops.port() + "/health/ready")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertThat(local).contains(FAILING, UNREACHABLE);

            InetAddress external = nonLoopbackAddress();
            if (external != null) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                        URI.create("http://" + external.getHostAddress() + ":" + ops.port() + "/health/ready")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(503);
                assertRedacted(r.body());
            }
        }
        // the function itself, whatever interfaces this machine has
        assertRedacted(health().report().text(false));
    }

    @Test
    void redactionKeepsTheHeadOfEveryProblem() {
        assertThat(Health.redact(FAILING))
                .isEqualTo("every cycle failed since 2026-06-01T12:00:00Z (7 cycles) (SQLSTATE 42501) [details only to loopback]");
        assertThat(Health.redact("no cycle completed since 2026-06-01T12:00:00Z (130 s, bound 120 s); last error: SQLSTATE 53100: disk full"))
                .isEqualTo("no cycle completed since 2026-06-01T12:00:00Z (130 s, bound 120 s) (SQLSTATE 53100) [details only to loopback]");
        assertThat(Health.redact("topic cmds: verification key file /etc/queen/keys.jwks cannot read it"))
                .isEqualTo("topic cmds [details only to loopback]");
        assertThat(Health.redact("connection did not answer within 2 s")).isEqualTo("connection did not answer within 2 s");
    }

    static void assertRedacted(String body) {
        assertThat(body).contains("not ready", "sweep-0: every cycle failed since 2026-06-01T12:00:00Z (7 cycles) (SQLSTATE 42501)",
                "database: unreachable", "kafka: ok");
        assertThat(body).doesNotContain("permission denied", "timer_fire_v2", "password", "\"queen\"", "FATAL");
    }

    /** An address of this machine that is not loopback (the request from it is not from loopback), or null. */
    static InetAddress nonLoopbackAddress() throws Exception {
        for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!nif.isUp() || nif.isLoopback()) {
                continue;
            }
            for (InetAddress a : Collections.list(nif.getInetAddresses())) {
                if (a instanceof Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
                    return a;
                }
            }
        }
        return null;
    }
}
