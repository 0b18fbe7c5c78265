package io.queen.timers.http.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.client.verdict.CommandSender;
import io.queen.timers.core.health.Health;
import io.queen.timers.http.HttpSettings;
import io.queen.timers.http.console.Console;
import io.queen.timers.http.route.CommandTopics;
import io.queen.timers.http.send.SenderPool;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.ConnectionLimit;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The routes: {@code POST /api/v1/timers} (a JSON array of operations, or {@code {"operations": [...]}}) and
 * {@code DELETE /api/v1/timers/{queue}/{timerKey}}, with the operator routes ({@link ReadRoutes}) and the console
 * ({@link Console}) when they are on. Each operation is written to the caller's command topic with the key
 * {@code <queue>/<timerKey>} and answered with its verdict from the audit topic ({@link SenderPool}); errors before
 * anything is written are {@code application/problem+json} ({@link Problem}).
 *
 * <p>On Jetty (docs/decisions.md), in two stages. Jetty's own {@link #IO_THREADS} threads accept connections, parse
 * request lines and headers as their bytes arrive (holding no thread while a client is slow: the header timeout,
 * {@link HeaderDeadlines}, closes one that does not finish), check the route, the rate, the token and the tenant's
 * share, and read a body without blocking (api.request.timeout bounds it). Only then does a request take one of
 * api.threads workers ({@code api-http}), for what blocks: Kafka's acknowledgement and the verdicts, or PostgreSQL's
 * answer. A tenant holds at most api.senders of them at once, reads and writes together ({@link TenantShares}); past
 * that its requests are answered 429 at once. Every limit is this server's own, set from {@link HttpSettings}; none is
 * a JVM-wide property.
 *
 * <p>Statuses: 200 when no operation was rejected; 207 when some were and some not; 422 when every one was; 202 when
 * a verdict did not come within api.verdict.timeout (that operation's {@code type} is {@code pending}: written, its
 * verdict will be on the audit topic under its {@code source}).
 */
public final class ApiServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ApiServer.class);
    public static final String TIMERS = "/api/v1/timers";
    /** Requests waiting for a worker; past this one is answered 503 with Retry-After, nothing done. */
    public static final int QUEUE = 64;
    /**
     * Jetty's threads: one accepts, one selects, the rest parse and route, never blocking. Enough for a busy server's
     * parsing on the few cores a service gets; more would only wait for the cores.
     */
    static final int IO_THREADS = 8;
    /** The rate limiter's bucket of an address's requests whose token no topic verified (or whose Authorization is malformed). */
    private static final String UNVERIFIED = "unverified:";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Server server;
    private final ServerConnector connector;
    private final HeaderDeadlines headers;
    private final ThreadPoolExecutor workers;
    private final HttpSettings settings;
    private final CommandTopics topics;
    private final Map<String, SenderPool> senders;
    private final RateLimiter limiter;
    private final TenantShares shares;
    private final ReadRoutes reads;
    private final LogRanges ranges;
    private final Console console;

    private ApiServer(Server server, ServerConnector connector, HeaderDeadlines headers, ThreadPoolExecutor workers,
            HttpSettings settings, CommandTopics topics, Map<String, SenderPool> senders, ReadRoutes reads, LogRanges ranges,
            Console console) {
        this.server = server;
        this.connector = connector;
        this.headers = headers;
        this.workers = workers;
        this.settings = settings;
        this.topics = topics;
        this.senders = senders;
        this.limiter = new RateLimiter(settings.limits().rateLimit(), settings.limits().rateBurst());
        this.shares = new TenantShares(settings.limits().senders());
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
        QueuedThreadPool io = new QueuedThreadPool(IO_THREADS, 2);
        io.setName("api-io");
        io.setDaemon(true);
        Server server = new Server(io);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        // the routes decode the raw path themselves, a segment at a time, and touch no file: an encoded slash or dot is
        // part of a queue or key (answered by the bridge's own rules), not a path trick to refuse before them
        http.setUriCompliance(UriCompliance.UNSAFE);
        HttpConnectionFactory h1 = new HttpConnectionFactory(http);
        ServerConnector connector;
        if (settings.listen().tlsKeyStore() == null) {
            connector = new ServerConnector(server, 1, 1, h1);
        } else {
            SslContextFactory.Server tls = new SslContextFactory.Server();
            tls.setSslContext(Tls.context(settings.listen().tlsKeyStore(), settings.listen().tlsKeyStorePassword()));
            tls.setIncludeProtocols("TLSv1.3", "TLSv1.2");
            connector = new ServerConnector(server, 1, 1, new SslConnectionFactory(tls, h1.getProtocol()), h1);
        }
        connector.setHost(settings.listen().bindAddress());
        connector.setPort(settings.listen().port());
        connector.setAcceptQueueSize(QUEUE);
        connector.setIdleTimeout(settings.timeouts().idle().toMillis());
        server.addConnector(connector);
        // past api.max.connections Jetty stops accepting until one closes: they wait in the kernel's backlog, holding nothing here
        server.addBean(new ConnectionLimit(settings.limits().maxConnections(), connector));
        HeaderDeadlines headers = new HeaderDeadlines(settings.timeouts().header(), server.getScheduler());
        connector.addEventListener(headers);

        ThreadPoolExecutor workers = new ThreadPoolExecutor(settings.limits().threads(), settings.limits().threads(), 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(QUEUE), r -> {
                    Thread t = new Thread(r, "api-http");
                    t.setDaemon(true);
                    return t;
                }, new ThreadPoolExecutor.AbortPolicy());
        LogRanges ranges = operator == null ? null : new LogRanges(admin);
        ReadRoutes reads = operator == null ? null : new ReadRoutes(operator, ranges, senders, settings.timeouts().verdict());
        Console console = reads == null || !settings.operator().consoleEnabled() ? null
                : new Console(reads, topics, health, settings.listen().tlsKeyStore() != null, settings.operator().cookiesSecure());
        ApiServer api = new ApiServer(server, connector, headers, workers, settings, topics, senders, reads, ranges, console);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                return api.handle(request, response, callback);
            }
        });
        // Jetty's own refusals (a malformed request line, headers past their size) as problems too, never an HTML page
        server.setErrorHandler(ApiServer::jettyError);
        try {
            server.start();
            headers.start();
        } catch (Exception e) {
            api.close();
            if (e instanceof IOException io2) {
                throw new UncheckedIOException("cannot listen on " + settings.listen().bindAddress() + ":" + settings.listen().port() + " (settings "
                        + HttpSettings.BIND_ADDRESS + ", " + HttpSettings.PORT + "): " + io2.getMessage(), io2);
            }
            throw e instanceof RuntimeException r ? r : new IllegalStateException("the API server did not start: " + e, e);
        }
        return api;
    }

    public int port() {
        return connector.getLocalPort();
    }

    private boolean handle(Request request, Response response, Callback callback) {
        Exchange ex = new Exchange(request, response, callback);
        Connection connection = request.getConnectionMetaData().getConnection();
        Request.addCompletionListener(request, failure -> headers.requestEnded(connection));
        // while a worker waits (for verdicts, up to api.verdict.timeout, or a statement) nothing moves on the connection, and
        // that is no reason to end it: the work has its own bounds. A body that stops arriving, or an answer not taken, is
        // still cut at the idle timeout (Jetty fails the pending read or write, whatever this says).
        request.addIdleTimeoutListener(timeout -> false);
        try {
            route(ex, request);
        } catch (RuntimeException e) {
            LOG.warn("request failed: {}", e.toString());
            problem(ex, Problem.unavailable("the request could not be handled; retry"));
        }
        return true;
    }

    /** On one of Jetty's threads: everything up to the work that blocks, which {@link #dispatch} hands to a worker. */
    private void route(Exchange ex, Request request) {
        String path = ex.path();
        String method = ex.method();
        if (console != null && Console.owns(path)) {
            console(ex, request);
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
            ex.setHeader("Allow", String.join(", ", allowed));
            problem(ex, Problem.methodNotAllowed(method + " is not served on this path"));
            return;
        }
        Optional<String> crossSite = CrossSite.refusal(method, ex::header);
        if (crossSite.isPresent()) {
            problem(ex, Problem.crossSite(crossSite.get()));
            return;
        }
        boolean post = method.equals("POST") && path.equals(TIMERS);
        boolean delete = method.equals("DELETE") && path.startsWith(TIMERS + "/");
        String address = ex.remoteAddress();
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
            ex.setHeader("WWW-Authenticate", "Bearer");
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
        List<Operations.Command> deleted;
        try {
            deleted = delete ? List.of(Operations.ofPath(path.substring(TIMERS.length() + 1))) : null;
            if (post) {
                requireJson(ex);
            }
        } catch (Operations.Refusal r) {
            problem(ex, r.problem);
            return;
        }
        Optional<TenantShares.Taken> share = shares.take(target.tenant());
        if (share.isEmpty()) {
            ex.setHeader("Retry-After", "1");
            problem(ex, Problem.tenantBusy());
            return;
        }
        ex.beforeAnswer(share.get()::close);
        if (post) {
            readBody(request, ex, settings.limits().maxBodyBytes(), body -> dispatch(ex, share.get(),
                    () -> submit(ex, target, Operations.ofBody(body, settings.limits().maxOps()))), refusal -> {
                        share.get().close();
                        bodyRefused(ex, refusal, settings.limits().maxBodyBytes());
                    });
        } else if (delete) {
            dispatch(ex, share.get(), () -> submit(ex, target, deleted));
        } else {
            dispatch(ex, share.get(), () -> read(ex, target, method, path));
        }
    }

    /** The console: its own pages and forms (HTML), under the same rate, shares and workers as the JSON routes. */
    private void console(Exchange ex, Request request) {
        if (!limiter.allow("addr:" + ex.remoteAddress(), System.nanoTime())) {
            limited(ex);
            return;
        }
        if (!ex.method().equals("POST")) {
            console.accept(ex, null).ifPresent(page -> drawConsole(ex, page));
            return;
        }
        if (console.refusedBeforeForm(ex)) {
            return;
        }
        readBody(request, ex, Console.MAX_FORM_BYTES, body -> {
            Map<String, String> form = console.form(ex, body);
            if (form != null) {
                console.accept(ex, form).ifPresent(page -> drawConsole(ex, page));
            }
        }, refusal -> console.formRefused(ex, refusal == BodyRefusal.TOO_LARGE ? 413 : 408));
    }

    private void drawConsole(Exchange ex, Console.Page page) {
        Optional<TenantShares.Taken> share = shares.take(page.caller().tenant());
        if (share.isEmpty()) {
            ex.setHeader("Retry-After", "1");
            console.busy(ex, page);
            return;
        }
        dispatch(ex, share.get(), () -> console.draw(ex, page));
    }

    /** What a worker runs: it may block (Kafka, PostgreSQL), and answers through the exchange. */
    private interface Work {
        void run() throws Operations.Refusal, SQLException, IOException;
    }

    /**
     * Hands {@code work} to a worker, its tenant's {@code share} held until its answer is written (given back just before,
     * so the client's next request finds it free) or the work ends without one; 503 when no worker can take it.
     */
    private void dispatch(Exchange ex, TenantShares.Taken share, Work work) {
        ex.beforeAnswer(share::close);
        try {
            workers.execute(() -> {
                try {
                    work.run();
                } catch (Operations.Refusal r) {
                    problem(ex, r.problem);
                } catch (SQLException e) {
                    LOG.warn("read failed: {}", e.toString());
                    problem(ex, Problem.unavailable("the database did not answer; retry"));
                } catch (IOException | RuntimeException e) {
                    LOG.warn("request failed: {}", e.toString());
                    problem(ex, Problem.unavailable("the commands could not be written to Kafka; retry (an operation that was written"
                            + " before the failure is answered on the audit topic)"));
                } finally {
                    share.close();
                }
            });
        } catch (RejectedExecutionException full) {
            share.close();
            ex.setHeader("Retry-After", "1");
            problem(ex, Problem.serverBusy());
        }
    }

    private void read(Exchange ex, CommandTopics.Target target, String method, String path) throws SQLException, IOException {
        ReadRoutes.Reply reply;
        try {
            reply = reads.handle(target, method, path, ReadRoutes.query(ex.rawQuery()));
        } catch (ReadRoutes.Answer a) {
            if (a.problem.status() == 429) {
                ex.setHeader("Retry-After", "1");
            }
            problem(ex, a.problem);
            return;
        }
        ex.send(reply.status(), "application/json", JSON.writeValueAsBytes(reply.body()));
    }

    private void submit(Exchange ex, CommandTopics.Target target, List<Operations.Command> commands) throws IOException {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        String traceparent = ex.header(WireFormat.TRACEPARENT);
        String tracestate = ex.header(WireFormat.TRACESTATE);
        for (Operations.Command c : commands) {
            ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(target.topic(), null, null,
                    c.key() == null ? null : c.key().getBytes(StandardCharsets.UTF_8), c.value());
            // the headers a Kafka producer's command carries: the token (the bridge verifies it against the record), the trace
            header(r, WireFormat.H_AUTH, target.token());
            header(r, WireFormat.TRACEPARENT, traceparent);
            header(r, WireFormat.TRACESTATE, traceparent == null ? null : tracestate);
            records.add(r);
        }
        Optional<List<CommandSender.Answer>> answers = senders.get(target.topic()).sendAll(records, settings.timeouts().verdict());
        if (answers.isEmpty()) {
            ex.setHeader("Retry-After", "1");
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
        ex.send(status, "application/json", JSON.writeValueAsBytes(body));
    }

    private static void header(ProducerRecord<byte[], byte[]> r, String name, String value) {
        if (value != null) {
            r.headers().add(new RecordHeader(name, value.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** The token of {@code Authorization: Bearer <token>}; null without the header. */
    private static String bearer(Exchange ex) throws Operations.Refusal {
        List<String> all = ex.headers("Authorization");
        if (all == null || all.isEmpty()) {
            return null;
        }
        String h = all.get(0).trim();
        if (all.size() > 1 || !h.regionMatches(true, 0, "Bearer ", 0, 7) || h.substring(7).isBlank()) {
            throw new Operations.Refusal(Problem.unauthorized(401, "Authorization must be one 'Bearer <token>'"));
        }
        return h.substring(7).trim();
    }

    /** A body's type and declared length, refused before a byte of it is read (413 unread past api.max.body.bytes). */
    private void requireJson(Exchange ex) throws Operations.Refusal {
        String type = ex.header("Content-Type");
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
        int max = settings.limits().maxBodyBytes();
        String length = ex.header("Content-Length");
        if (length != null) {
            long declared;
            try {
                declared = Long.parseLong(length.trim());
            } catch (NumberFormatException e) {
                throw new Operations.Refusal(Problem.badRequest("Content-Length is not a number"));
            }
            if (declared > max) {
                ex.setHeader("Connection", "close");
                throw new Operations.Refusal(Problem.tooLarge("the body is " + declared + " bytes; at most " + max + " (api.max.body.bytes)"));
            }
        }
    }

    /** Why a body was not read whole. */
    public enum BodyRefusal { TOO_LARGE, TIMED_OUT, FAILED }

    /**
     * Reads the request's body without holding a thread: Jetty calls back as its bytes arrive. {@code read} gets it whole;
     * {@code refused} is told why not: past {@code max} bytes, or not whole within api.request.timeout (then the connection
     * is closed once answered), or the connection failed (then it is already closed, and nothing is answered).
     */
    private void readBody(Request request, Exchange ex, int max, Consumer<byte[]> read, Consumer<BodyRefusal> refused) {
        AtomicBoolean over = new AtomicBoolean();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Scheduler.Task timeout = server.getScheduler().schedule(() -> {
            if (over.compareAndSet(false, true)) {
                ex.setHeader("Connection", "close");
                refused.accept(BodyRefusal.TIMED_OUT);
            }
        }, settings.timeouts().request().toMillis(), TimeUnit.MILLISECONDS);
        Runnable reader = new Runnable() {
            @Override
            public void run() {
                while (!over.get()) {
                    Content.Chunk chunk = request.read();
                    if (chunk == null) {
                        request.demand(this);
                        return;
                    }
                    if (Content.Chunk.isFailure(chunk)) {
                        if (over.compareAndSet(false, true)) {
                            timeout.cancel();
                            if (chunk.getFailure() instanceof TimeoutException) {
                                // the body stopped arriving for api.idle.timeout: answered as one past api.request.timeout
                                ex.setHeader("Connection", "close");
                                refused.accept(BodyRefusal.TIMED_OUT);
                            } else {
                                refused.accept(BodyRefusal.FAILED);
                                ex.abort(chunk.getFailure());
                            }
                        }
                        return;
                    }
                    ByteBuffer b = chunk.getByteBuffer();
                    if (out.size() + b.remaining() > max) {
                        chunk.release();
                        if (over.compareAndSet(false, true)) {
                            timeout.cancel();
                            ex.setHeader("Connection", "close");
                            refused.accept(BodyRefusal.TOO_LARGE);
                        }
                        return;
                    }
                    byte[] bytes = new byte[b.remaining()];
                    b.get(bytes);
                    out.write(bytes, 0, bytes.length);
                    boolean last = chunk.isLast();
                    chunk.release();
                    if (last) {
                        if (over.compareAndSet(false, true)) {
                            timeout.cancel();
                            ex.body(out.toByteArray());
                            read.accept(ex.body());
                        }
                        return;
                    }
                }
            }
        };
        reader.run();
    }

    private void bodyRefused(Exchange ex, BodyRefusal refusal, int max) {
        switch (refusal) {
            case TOO_LARGE -> problem(ex, Problem.tooLarge("the body is more than " + max + " bytes (api.max.body.bytes)"));
            case TIMED_OUT -> problem(ex, Problem.requestTimeout("the body did not arrive whole within "
                    + settings.timeouts().request().toMillis() + " ms (api.request.timeout), or stopped for "
                    + settings.timeouts().idle().toMillis() + " ms (api.idle.timeout): nothing was written"));
            case FAILED -> { } // the connection is gone: nothing to answer
        }
    }

    private void limited(Exchange ex) {
        ex.setHeader("Retry-After", String.valueOf(limiter.retryAfterSeconds()));
        problem(ex, Problem.tooManyRequests("more than " + settings.limits().rateLimit() + " requests a second (api.rate.limit)"));
    }

    private void limitedUnverified(Exchange ex) {
        ex.setHeader("Retry-After", String.valueOf(limiter.retryAfterSeconds()));
        problem(ex, Problem.tooManyRequests("more than " + settings.limits().rateLimit() + " requests a second from this address with tokens"
                + " this server did not accept (api.rate.limit): no token is checked from it until then"));
    }

    private static void problem(Exchange ex, Problem p) {
        ex.send(p.status(), Problem.MEDIA_TYPE, p.json(JSON));
    }

    /** Jetty's own refusals, before a route ran (a request line or URI it cannot parse, headers past their size), as problems. */
    private static boolean jettyError(Request request, Response response, Callback callback) {
        int status = request.getAttribute(ErrorHandler.ERROR_STATUS) instanceof Integer s ? s : 400;
        String kind = status == 413 || status == 414 || status == 431 ? "too-large" : status == 408 ? "timeout" : status >= 500 ? "unavailable"
                : "bad-request";
        // Jetty's reasons for a request it refused are its own short words ("Illegal character in path"); a failure of its own
        // (5xx) is said in none, as its message may name internals
        Object why = status < 500 ? request.getAttribute(ErrorHandler.ERROR_MESSAGE) : null;
        Problem p = new Problem(status < 400 ? 400 : status, kind, "The request could not be read",
                "the server could not read this request (HTTP " + status + (why instanceof String w && !w.isBlank() ? ": " + w : "") + ")");
        response.setStatus(p.status());
        response.getHeaders().put("Content-Type", Problem.MEDIA_TYPE);
        response.write(true, ByteBuffer.wrap(p.json(JSON)), callback);
        return true;
    }

    @Override
    public void close() {
        headers.close();
        try {
            server.stop();
        } catch (Exception e) {
            LOG.warn("the API server did not stop cleanly: {}", e.toString());
        }
        workers.shutdownNow();
        if (ranges != null) {
            ranges.close();
        }
    }
}
