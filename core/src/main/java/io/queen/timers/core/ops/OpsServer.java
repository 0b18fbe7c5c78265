package io.queen.timers.core.ops;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;

/**
 * The HTTP face of a process: {@code /health/live} (the process runs), {@code /health/ready}
 * (every {@link ReadinessCheck} passes; 503 with the reasons otherwise) and {@code /metrics}
 * (Prometheus text format). The JDK's own HTTP server: one small thread pool, no framework.
 */
public final class OpsServer implements AutoCloseable {

    private final HttpServer server;

    private OpsServer(HttpServer server) {
        this.server = server;
    }

    /** Starts on {@code port} (0 = a free port) on all interfaces. */
    public static OpsServer start(int port, PrometheusMeterRegistry registry, List<ReadinessCheck> checks) {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(port), 16);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on http port " + port + " (setting http.port): " + e.getMessage(), e);
        }
        server.setExecutor(Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "ops-http");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/health/live", ex -> respond(ex, 200, "text/plain", "live\n"));
        server.createContext("/health/ready", ex -> {
            StringBuilder body = new StringBuilder();
            boolean ready = true;
            for (ReadinessCheck c : checks) {
                Optional<String> problem;
                try {
                    problem = c.problem();
                } catch (RuntimeException e) {
                    problem = Optional.of(e.toString());
                }
                ready &= problem.isEmpty();
                body.append(c.name()).append(": ").append(problem.orElse("ok")).append('\n');
            }
            respond(ex, ready ? 200 : 503, "text/plain", (ready ? "ready\n" : "not ready\n") + body);
        });
        server.createContext("/metrics", ex -> respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape()));
        server.start();
        return new OpsServer(server);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }

    private static void respond(HttpExchange ex, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", contentType);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }
}
