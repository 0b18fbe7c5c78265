package io.queen.timers.testkit;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A bridge started by a launcher under test (the service jar, the image's entrypoint) against the testkit's PostgreSQL
 * and broker: the environment it needs, and its run until {@code /health/ready} says the database and Kafka are ok,
 * ended by a SIGTERM. The launcher's own checks (migrate first, the exit code) stay the caller's.
 */
public final class LaunchedBridge {

    private static final Duration READY_WITHIN = Duration.ofSeconds(90);

    private LaunchedBridge() {}

    /**
     * Adds to {@code env} (which already names the database) the testkit's broker, a new command topic and audit topic
     * named after {@code prefix}, and a free port for the health endpoint; the testkit connects as the server's superuser,
     * so db.role.check is off (docs/schema-and-roles.md#database-roles). Returns that port.
     */
    public static int environment(Map<String, String> env, String prefix) throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        env.put("QUEEN_DB_ROLE_CHECK", "false");
        env.put("QUEEN_KAFKA_BOOTSTRAP", TestKafka.bootstrapServers());
        env.put("QUEEN_COMMAND_TOPICS", TestKafka.newTopic(prefix + "-commands", 1));
        env.put("QUEEN_AUDIT_TOPIC", TestKafka.newTopic(prefix + "-audit", 1));
        env.put("QUEEN_HTTP_PORT", Integer.toString(port));
        return port;
    }

    /**
     * Starts {@code bridge} (its output to {@code log}), waits until its readiness on {@code port} answers 200 with
     * "database: ok" and "kafka: ok", then sends SIGTERM (SIGKILL after 30 s) and returns its exit code. Fails when it
     * exits before it is ready, or is not ready within 90 s.
     */
    public static int runUntilReady(ProcessBuilder bridge, int port, Path log) throws Exception {
        Process p = bridge.redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            HttpRequest ready = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health/ready"))
                    .timeout(Duration.ofSeconds(5)).build();
            long deadline = System.nanoTime() + READY_WITHIN.toNanos();
            String last = "no answer yet";
            while (true) {
                if (!p.isAlive()) {
                    throw new AssertionError("the bridge exited (" + p.exitValue() + ") before it was ready; log: " + log);
                }
                try {
                    HttpResponse<String> r = http.send(ready, HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() == 200 && r.body().contains("database: ok") && r.body().contains("kafka: ok")) {
                        break;
                    }
                    last = r.statusCode() + " " + r.body();
                } catch (IOException notYet) {
                    last = notYet.toString();
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the bridge was not ready within " + READY_WITHIN + " (last answer: " + last + "); log: " + log);
                }
                Thread.sleep(100);
            }
        } finally {
            p.destroy(); // SIGTERM: the shutdown hook stops the bridge
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
        return p.exitValue();
    }
}
