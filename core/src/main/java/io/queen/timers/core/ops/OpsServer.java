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
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP face of a process: {@code /health/live} (the process runs), {@code /health/ready}
 * (every check of the process's {@link Health} passes; 503 with the reasons otherwise) and {@code /metrics}
 * (Prometheus text format). The JDK's own HTTP server, no framework. The handlers read memory only
 * ({@link Health#report()}): a request never waits for the database or the broker.
 *
 * <p>Slow or hostile clients cannot take it down ({@link #LIMITS}): a connection that sends nothing holds no
 * thread (the JDK server waits for its first byte on its selector) and is closed after
 * {@code maxReqTime}; one that sends part of a request holds a thread only until {@code maxReqTime}
 * closes it; a client that does not read its response is cut off after {@code maxRspTime}; the pool has
 * {@link #THREADS} threads and sheds (closes) what its short queue cannot take instead of queueing without
 * bound; connections are capped so sockets cannot run the process out of file descriptors. The readiness
 * body carries error details (database messages, file names) only to a request from loopback; others get
 * each problem's head ({@link Health#redact}).
 *
 * <p>PRICE of the JDK's server: its limits are JVM-wide system properties. This is the only server of the JDK's kind in
 * a service (the HTTP API runs on Jetty with limits of its own, docs/decisions.md), so they are this server's in effect;
 * a process that made another would share them.
 */
public final class OpsServer implements AutoCloseable {

    /**
     * The JDK server's limits. They are JVM-wide system properties, read once when the first server is made
     * (so they are set before that, by {@link #applyLimits}), and a value given with {@code -D} wins. Checked against
     * JDK 17's sun.net.httpserver.ServerConfig/ServerImpl: times in seconds except clockTick/timerMillis (ms).
     */
    static final Map<String, String> LIMITS = Map.of(
            "sun.net.httpserver.maxReqTime", "2",          // a request line and headers arrive whole within 2 s
            "sun.net.httpserver.maxRspTime", "10",         // a response is taken within 10 s (the handlers answer at once)
            "sun.net.httpserver.idleInterval", "10",       // a kept-alive connection may idle 10 s
            "sun.net.httpserver.clockTick", "1000",        // idle and never-used connections are swept every second
            "sun.net.httpserver.timerMillis", "500",       // request and response times are checked twice a second
            "jdk.httpserver.maxConnections", "128");       // beyond this a new connection is closed at once
    /** Requests handled at once; each is a few microseconds of memory reads, so more threads only serve slow clients. */
    static final int THREADS = 8;
    /** Requests waiting for a thread; past this a new request's connection is closed (the JDK server does so when the executor refuses). */
    static final int QUEUE = 64;

    /** Sets {@link #LIMITS} where {@code -D} did not, before the JDK reads them (once, when its first server is made). */
    private static synchronized void applyLimits() {
        LIMITS.forEach((k, v) -> {
            if (System.getProperty(k) == null) {
                System.setProperty(k, v);
            }
        });
    }

    /** The paths served; probes and scrapers outside the code (deploy/kubernetes, docker) are checked against them. */
    public static final String LIVE_PATH = "/health/live";
    public static final String READY_PATH = "/health/ready";
    public static final String METRICS_PATH = "/metrics";

    private final HttpServer server;
    private final ExecutorService pool;

    private OpsServer(HttpServer server, ExecutorService pool) {
        this.server = server;
        this.pool = pool;
    }

    /** Starts on {@code bindAddress}:{@code port} (0 = a free port). */
    public static OpsServer start(String bindAddress, int port, PrometheusMeterRegistry registry, Health health) {
        applyLimits();
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(bindAddress, port), 64);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + bindAddress + ":" + port + " (settings http.bind.address, http.port): "
                    + e.getMessage(), e);
        }
        ExecutorService pool = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(QUEUE), r -> {
            Thread t = new Thread(r, "ops-http");
            t.setDaemon(true);
            return t;
        }, new ThreadPoolExecutor.AbortPolicy());
        server.setExecutor(pool);
        server.createContext(LIVE_PATH, ex -> respond(ex, 200, "text/plain", "live\n"));
        server.createContext(READY_PATH, ex -> {
            Health.Report report = health.report();
            respond(ex, report.ready() ? 200 : 503, "text/plain", report.text(fromLoopback(ex)));
        });
        server.createContext(METRICS_PATH, ex -> respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape()));
        server.start();
        return new OpsServer(server, pool);
    }

    /** Details go only to this host: anyone else may be a stranger on the network the port is open to. */
    static boolean fromLoopback(HttpExchange ex) {
        InetSocketAddress remote = ex.getRemoteAddress();
        return remote != null && remote.getAddress() != null && remote.getAddress().isLoopbackAddress();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
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
