package io.queen.timers.core.ops;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.queen.timers.core.health.Health;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

/**
 * The HTTP face of a process: {@code /health/live} (the process runs), {@code /health/ready}
 * (every check of the process's {@link Health} passes; 503 with the reasons otherwise) and {@code /metrics}
 * (Prometheus text format). The JDK's own HTTP server: one small thread pool, no framework. The handlers
 * read memory only ({@link Health#report()}): a request never waits for the database or the broker, so
 * slow clients or a hung dependency cannot starve the two threads.
 */
public final class OpsServer implements AutoCloseable {

    private final HttpServer server;

    private OpsServer(HttpServer server) {
        this.server = server;
    }

    /** Starts on {@code bindAddress}:{@code port} (0 = a free port). */
    public static OpsServer start(String bindAddress, int port, PrometheusMeterRegistry registry, Health health) {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(bindAddress, port), 16);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + bindAddress + ":" + port + " (settings http.bind.address, http.port): "
                    + e.getMessage(), e);
        }
        server.setExecutor(Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "ops-http");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/health/live", ex -> respond(ex, 200, "text/plain", "live\n"));
        server.createContext("/health/ready", ex -> {
            Health.Report report = health.report();
            respond(ex, report.ready() ? 200 : 503, "text/plain", report.text());
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
