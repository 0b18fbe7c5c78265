package io.queen.timers.http.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.client.verdict.CommandSender;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.core.ops.OpsServer;
import io.queen.timers.core.health.Health;
import io.queen.timers.http.HttpSettings;
import io.queen.timers.http.console.Console;
import io.queen.timers.http.route.CommandTopics;
import io.queen.timers.http.send.SenderPool;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The routes: {@code POST /api/v1/timers} (a JSON array of operations, or {@code {"operations": [...]}}) and
 * {@code DELETE /api/v1/timers/{queue}/{timerKey}}. Each operation is written to the caller's command topic with the
 * key {@code <queue>/<timerKey>} and answered with its verdict from the audit topic ({@link SenderPool}); errors before
 * anything is written are {@code application/problem+json} ({@link Problem}). The JDK's own HTTP server, as the
 * /health and /metrics server ({@link OpsServer}), with its limits: a client that sends its request (headers and
 * body) slower than {@code sun.net.httpserver.maxReqTime} (2 s) is cut off, holding one thread until then; one that
 * does not take its answer is cut off {@code maxRspTime} after its request, which is set to cover the longest answer
 * this server computes ({@link #longestAnswer}) and 10 s more.
 *
 * <p>Statuses: 200 when no operation was rejected; 207 when some were and some not; 422 when every one was; 202 when
 * a verdict did not come within api.verdict.timeout (that operation's {@code type} is {@code pending}: written, its
 * verdict will be on the audit topic under its {@code source}).
 */
public final class ApiServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ApiServer.class);
    public static final String TIMERS = "/api/v1/timers";
    /** Requests waiting for a thread; past this a new request's connection is closed, as /health's server does. */
    static final int QUEUE = 64;
    /** The rate limiter's bucket of an address's requests whose token no topic verified (or whose Authorization is malformed). */
    private static final String UNVERIFIED = "unverified:";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final ThreadPoolExecutor pool;
    private final HttpSettings settings;
    private final CommandTopics topics;
    private final Map<String, SenderPool> senders;
    private final RateLimiter limiter;
    private final ReadRoutes reads;
    private final LogRanges ranges;
    private final Console console;

    private ApiServer(HttpServer server, ThreadPoolExecutor pool, HttpSettings settings, CommandTopics topics,
            Map<String, SenderPool> senders, ReadRoutes reads, LogRanges ranges, Console console) {
        this.server = server;
        this.pool = pool;
        this.settings = settings;
        this.topics = topics;
        this.senders = senders;
        this.limiter = new RateLimiter(settings.rateLimit(), settings.rateBurst());
        this.reads = reads;
        this.ranges = ranges;
        this.console = console;
    }

    /**
     * @param senders    a pool per command topic the API writes to
     * @param operator   a pool connected as a login of queen_operator for the read routes; null when api.reads.enabled is off
     * @param admin      Kafka Admin client settings: with the reads, one client asks the broker's log ranges ({@link LogRanges})
     * @param health     the readiness the console's overview shows with api.console.enabled; null: none
     */
    public static ApiServer start(HttpSettings settings, CommandTopics topics, Map<String, SenderPool> senders, DataSource operator,
            Map<String, Object> admin, Health health) {
        OpsServer.applyLimits(longestAnswer(settings));
        requireResponseLimit(settings, OpsServer.responseLimit());
        HttpServer server;
        try {
            InetSocketAddress address = new InetSocketAddress(settings.bindAddress(), settings.port());
            if (settings.tlsKeyStore() == null) {
                server = HttpServer.create(address, 64);
            } else {
                SSLContext tls = Tls.context(settings.tlsKeyStore(), settings.tlsKeyStorePassword());
                HttpsServer https = HttpsServer.create(address, 64);
                https.setHttpsConfigurator(new HttpsConfigurator(tls) {
                    @Override
                    public void configure(HttpsParameters p) {
                        SSLParameters params = tls.getDefaultSSLParameters();
                        params.setProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
                        p.setSSLParameters(params);
                    }
                });
                server = https;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + settings.bindAddress() + ":" + settings.port() + " (settings "
                    + HttpSettings.BIND_ADDRESS + ", " + HttpSettings.PORT + "): " + e.getMessage(), e);
        }
        ThreadPoolExecutor pool = new ThreadPoolExecutor(settings.threads(), settings.threads(), 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(QUEUE), r -> {
                    Thread t = new Thread(r, "api-http");
                    t.setDaemon(true);
                    return t;
                }, new ThreadPoolExecutor.AbortPolicy());
        server.setExecutor(pool);
        LogRanges ranges = operator == null ? null : new LogRanges(admin);
        ReadRoutes reads = operator == null ? null : new ReadRoutes(operator, ranges, senders, settings.verdictTimeout());
        Console console = reads == null || !settings.consoleEnabled() ? null
                : new Console(reads, topics, health, settings.tlsKeyStore() != null);
        ApiServer api = new ApiServer(server, pool, settings, topics, senders, reads, ranges, console);
        server.createContext("/", api::handle);
        server.start();
        return api;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /**
     * The longest this server computes an answer once it has read the request: Kafka's acknowledgement of the commands,
     * then api.verdict.timeout for their verdicts (a 202 pending after it); with the reads, at least one statement of
     * PostgreSQL (the operator's statement timeout). {@link OpsServer#applyLimits} gives the JDK's response limit this
     * plus the time a client has to take the answer.
     */
    public static Duration longestAnswer(HttpSettings s) {
        Duration write = SenderPool.ACKNOWLEDGED_WITHIN.plus(s.verdictTimeout());
        Duration read = SessionTimeouts.OPERATOR.statement();
        return s.readsEnabled() && read.compareTo(write) > 0 ? read : write;
    }

    /**
     * Refuses to start where the JVM's response limit ({@code inForce}: set by -D, or by a server this process made before)
     * would cut off an answer the server is still computing, such as the 202 pending that comes after api.verdict.timeout.
     */
    static void requireResponseLimit(HttpSettings s, Optional<Duration> inForce) {
        Duration needed = longestAnswer(s).plus(OpsServer.RESPONSE_TAKE);
        if (inForce.isPresent() && inForce.get().compareTo(needed) < 0) {
            long seconds = (needed.toMillis() + 999) / 1000;
            throw new ConfigException("setting " + HttpSettings.VERDICT_TIMEOUT + " = " + s.verdictTimeout() + " cannot be answered here:"
                    + " this JVM's HTTP servers cut a response off " + inForce.get().toSeconds() + " s after its request ("
                    + OpsServer.MAX_RSP_TIME + ", set by -D or by a server made earlier in this process), before a 202 pending is"
                    + " sent; it needs at least " + seconds + " s (the verdict timeout, " + SenderPool.ACKNOWLEDGED_WITHIN.toSeconds()
                    + " s for Kafka's acknowledgement, " + OpsServer.RESPONSE_TAKE.toSeconds() + " s for the client to take the"
                    + " answer): raise -D" + OpsServer.MAX_RSP_TIME + " or lower " + HttpSettings.VERDICT_TIMEOUT);
        }
    }

    private void handle(HttpExchange ex) throws IOException {
        try {
            String path = ex.getRequestURI().getRawPath();
            String method = ex.getRequestMethod();
            if (console != null && Console.owns(path)) {
                if (!limiter.allow("addr:" + remote(ex), System.nanoTime())) {
                    limited(ex);
                    return;
                }
                console.handle(ex);
                return;
            }
            List<String> allowed;
            if (path.equals(TIMERS)) {
                allowed = reads == null ? List.of("POST") : List.of("GET", "POST");
            } else if (path.startsWith(TIMERS + "/")) {
                allowed = reads == null ? List.of("DELETE") : List.of("DELETE", "GET");
            } else if (reads != null && ReadRoutes.owns(path)) {
                allowed = ReadRoutes.allowed(path);
            } else {
                problem(ex, Problem.notFound("the API serves POST " + TIMERS + " and DELETE " + TIMERS + "/{queue}/{timerKey}"
                        + (reads == null ? "" : ", and the operator routes of docs/http-api.md")));
                return;
            }
            if (!allowed.contains(method)) {
                ex.getResponseHeaders().set("Allow", String.join(", ", allowed));
                problem(ex, Problem.methodNotAllowed(method + " is not served on this path"));
                return;
            }
            Optional<String> crossSite = CrossSite.refusal(method, ex.getRequestHeaders());
            if (crossSite.isPresent()) {
                problem(ex, Problem.crossSite(crossSite.get()));
                return;
            }
            boolean post = method.equals("POST") && path.equals(TIMERS);
            String address = remote(ex);
            String bearer = null;
            CommandTopics.Target target;
            try {
                bearer = bearer(ex);
                if (bearer == null && !limiter.allow("addr:" + address, System.nanoTime())) {
                    limited(ex);
                    return;
                }
                // a token no topic verifies is paid for by its address, checked before any signature work: a flood of
                // forged tokens costs a parse each, not a signature check each
                if (bearer != null && !limiter.has(UNVERIFIED + address, System.nanoTime())) {
                    limitedUnverified(ex);
                    return;
                }
                target = topics.resolve(bearer, System.currentTimeMillis());
            } catch (CommandTopics.Refused r) {
                if (bearer != null) {
                    limiter.allow(UNVERIFIED + address, System.nanoTime());
                }
                ex.getResponseHeaders().set("WWW-Authenticate", "Bearer");
                problem(ex, Problem.unauthorized(r.status, r.getMessage()));
                return;
            } catch (Operations.Refusal r) {
                limiter.allow(UNVERIFIED + address, System.nanoTime()); // a malformed Authorization header
                problem(ex, r.problem);
                return;
            }
            if (target.caller() != null && !limiter.allow("sub:" + target.tenant() + "/" + target.caller(), System.nanoTime())) {
                limited(ex);
                return;
            }
            if (!post && !(method.equals("DELETE") && path.startsWith(TIMERS + "/"))) {
                read(ex, target, method, path);
                return;
            }
            List<Operations.Command> commands;
            try {
                commands = post ? Operations.ofBody(body(ex), settings.maxOps())
                        : List.of(Operations.ofPath(path.substring(TIMERS.length() + 1)));
            } catch (Operations.Refusal r) {
                problem(ex, r.problem);
                return;
            }
            submit(ex, target, commands);
        } catch (RuntimeException e) {
            LOG.warn("request failed: {}", e.toString());
            try {
                problem(ex, Problem.unavailable("the commands could not be written to Kafka; retry (an operation that was written"
                        + " before the failure is answered on the audit topic)"));
            } catch (IOException | RuntimeException alreadySent) {
                // the response had begun: the connection closes
            }
        } finally {
            ex.close();
        }
    }

    private void read(HttpExchange ex, CommandTopics.Target target, String method, String path) throws IOException {
        ReadRoutes.Reply reply;
        try {
            reply = reads.handle(target, method, path, ReadRoutes.query(ex.getRequestURI().getRawQuery()));
        } catch (ReadRoutes.Answer a) {
            if (a.problem.status() == 429) {
                ex.getResponseHeaders().set("Retry-After", "1");
            }
            problem(ex, a.problem);
            return;
        } catch (SQLException e) {
            LOG.warn("read failed: {}", e.toString());
            problem(ex, Problem.unavailable("the database did not answer; retry"));
            return;
        }
        send(ex, reply.status(), "application/json", JSON.writeValueAsBytes(reply.body()));
    }

    private void submit(HttpExchange ex, CommandTopics.Target target, List<Operations.Command> commands) throws IOException {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        String traceparent = ex.getRequestHeaders().getFirst(WireFormat.TRACEPARENT);
        String tracestate = ex.getRequestHeaders().getFirst(WireFormat.TRACESTATE);
        for (Operations.Command c : commands) {
            ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(target.topic(), null, null,
                    c.key() == null ? null : c.key().getBytes(StandardCharsets.UTF_8), c.value());
            // the headers a Kafka producer's command carries: the token (the bridge verifies it against the record), the trace
            header(r, WireFormat.H_AUTH, target.token());
            header(r, WireFormat.TRACEPARENT, traceparent);
            header(r, WireFormat.TRACESTATE, traceparent == null ? null : tracestate);
            records.add(r);
        }
        Optional<List<CommandSender.Answer>> answers = senders.get(target.topic()).sendAll(records, settings.verdictTimeout());
        if (answers.isEmpty()) {
            ex.getResponseHeaders().set("Retry-After", "1");
            problem(ex, Problem.tenantBusy());
            return;
        }
        ObjectNode body = JSON.createObjectNode();
        ArrayNode results = body.putArray("results");
        int rejected = 0;
        int pending = 0;
        for (int i = 0; i < answers.get().size(); i++) {
            CommandSender.Answer a = answers.get().get(i);
            ObjectNode n = results.addObject().put("index", i);
            VerdictJson.write(n, a);
            if (a.verdict().isEmpty()) {
                pending++;
            } else if (a.verdict().get() instanceof AuditEvent.Rejected) {
                rejected++;
            }
        }
        int n = answers.get().size();
        int status = pending > 0 ? 202 : rejected == 0 ? 200 : rejected == n ? 422 : 207;
        send(ex, status, "application/json", JSON.writeValueAsBytes(body));
    }

    private static void header(ProducerRecord<byte[], byte[]> r, String name, String value) {
        if (value != null) {
            r.headers().add(new RecordHeader(name, value.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** The token of {@code Authorization: Bearer <token>}; null without the header. */
    private static String bearer(HttpExchange ex) throws Operations.Refusal {
        List<String> all = ex.getRequestHeaders().get("Authorization");
        if (all == null || all.isEmpty()) {
            return null;
        }
        String h = all.get(0).trim();
        if (all.size() > 1 || !h.regionMatches(true, 0, "Bearer ", 0, 7) || h.substring(7).isBlank()) {
            throw new Operations.Refusal(Problem.unauthorized(401, "Authorization must be one 'Bearer <token>'"));
        }
        return h.substring(7).trim();
    }

    /** The body, refused (413) past api.max.body.bytes: unread when its Content-Length says so, else when it passes it. */
    private byte[] body(HttpExchange ex) throws IOException, Operations.Refusal {
        String type = ex.getRequestHeaders().getFirst("Content-Type");
        String[] parts = type == null ? new String[] {""} : type.toLowerCase(Locale.ROOT).split(";");
        if (!parts[0].trim().equals("application/json")) {
            throw new Operations.Refusal(Problem.unsupportedMediaType("Content-Type must be application/json"));
        }
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].trim();
            if (p.startsWith("charset=") && !p.substring(8).replace("\"", "").trim().equals("utf-8")) {
                throw new Operations.Refusal(Problem.unsupportedMediaType("the body must be UTF-8 (RFC 8259): a charset in"
                        + " Content-Type must be utf-8, or be left out"));
            }
        }
        int max = settings.maxBodyBytes();
        String length = ex.getRequestHeaders().getFirst("Content-Length");
        if (length != null) {
            long declared;
            try {
                declared = Long.parseLong(length.trim());
            } catch (NumberFormatException e) {
                throw new Operations.Refusal(Problem.badRequest("Content-Length is not a number"));
            }
            if (declared > max) {
                ex.getResponseHeaders().set("Connection", "close");
                throw new Operations.Refusal(Problem.tooLarge("the body is " + declared + " bytes; at most " + max + " (api.max.body.bytes)"));
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[16 * 1024];
        try (InputStream in = ex.getRequestBody()) {
            for (int n; (n = in.read(buf)) > 0; ) {
                out.write(buf, 0, n);
                if (out.size() > max) {
                    ex.getResponseHeaders().set("Connection", "close");
                    throw new Operations.Refusal(Problem.tooLarge("the body is more than " + max + " bytes (api.max.body.bytes)"));
                }
            }
        }
        return out.toByteArray();
    }

    private void limited(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().set("Retry-After", String.valueOf(limiter.retryAfterSeconds()));
        problem(ex, Problem.tooManyRequests("more than " + settings.rateLimit() + " requests a second (api.rate.limit)"));
    }

    private void limitedUnverified(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().set("Retry-After", String.valueOf(limiter.retryAfterSeconds()));
        problem(ex, Problem.tooManyRequests("more than " + settings.rateLimit() + " requests a second from this address with tokens"
                + " this server did not accept (api.rate.limit): no token is checked from it until then"));
    }

    private static String remote(HttpExchange ex) {
        InetSocketAddress a = ex.getRemoteAddress();
        return a == null || a.getAddress() == null ? "?" : a.getAddress().getHostAddress();
    }

    private static void problem(HttpExchange ex, Problem p) throws IOException {
        send(ex, p.status(), Problem.MEDIA_TYPE, p.json(JSON));
    }

    private static void send(HttpExchange ex, int status, String type, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
        if (ranges != null) {
            ranges.close();
        }
    }
}
