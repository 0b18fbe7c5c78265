package io.queen.timers.http;

import static io.queen.timers.core.config.ConfigDef.Type.BOOLEAN;
import static io.queen.timers.core.config.ConfigDef.Type.DURATION;
import static io.queen.timers.core.config.ConfigDef.Type.INT;
import static io.queen.timers.core.config.ConfigDef.Type.LIST;
import static io.queen.timers.core.config.ConfigDef.Type.PASSWORD;
import static io.queen.timers.core.config.ConfigDef.Type.STRING;
import static io.queen.timers.core.config.ConfigDef.between;
import static io.queen.timers.core.config.ConfigDef.durationBetween;
import static io.queen.timers.core.config.ConfigDef.nonEmpty;
import static io.queen.timers.core.config.ConfigDef.oneOf;

import io.queen.timers.core.config.AuditTopics;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.routes.TopicRoutes;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Everything the HTTP API process reads (docs/configuration.md, docs/http-api.md). Its own keys are {@code api.*}
 * ({@code http.*} is every process's /health and /metrics port). The command topics, their tenants and their
 * {@code topic.<name>.auth*} token rules are {@link RouteSettings}, the keys and the reading the bridge uses too: one
 * config file serves both, so the API checks a token exactly as the bridge will, and the audit topics are
 * {@code audit.topic} / {@code audit.tenant.topics}, the keys the relay publishes by. With {@code api.reads.enabled} the
 * operator read routes connect to PostgreSQL with the common {@code jdbc.*} keys (one owner: CommonSettings), as a login
 * of the {@code queen_operator} role, checked at start as every service's role is ({@code db.role.check}).
 *
 * <p>Grouped by concern, so a component reads a setting by name ({@code settings.limits().maxOps()}), and two
 * {@code int}s or {@code Duration}s cannot swap unseen: {@link #listen()} where and how the server listens,
 * {@link #limits()} what one client, tenant or request may take, {@link #timeouts()} how long each wait may last,
 * {@link #topics()} where commands go and verdicts come from, {@link #operator()} the operator reads and console. The
 * price: one more accessor on each read.
 */
public record HttpSettings(Listen listen, Limits limits, Timeouts timeouts, Topics topics, Operator operator,
        CommonSettings common) {

    /**
     * Where and how the server listens: {@code api.port}, {@code api.bind.address},
     * {@code api.unauthenticated.remote.allowed}, {@code api.tls.keystore.file} ({@code tlsKeyStore} null for plain
     * HTTP) and its password.
     */
    public record Listen(int port, String bindAddress, boolean unauthenticatedRemoteAllowed, Path tlsKeyStore,
            String tlsKeyStorePassword) {
        @Override
        public String toString() {
            // the record's own toString would print the keystore password
            return "Listen[port=" + port + ", bindAddress=" + bindAddress + ", unauthenticatedRemoteAllowed="
                    + unauthenticatedRemoteAllowed + ", tls=" + (tlsKeyStore != null) + "]";
        }
    }

    /**
     * What the server and each client, tenant and request may take: {@code api.max.body.bytes}, {@code api.max.ops},
     * {@code api.rate.limit}, {@code api.rate.burst}, {@code api.threads}, {@code api.senders},
     * {@code api.max.connections}.
     */
    public record Limits(int maxBodyBytes, int maxOps, int rateLimit, int rateBurst, int threads, int senders,
            int maxConnections) {}

    /** How long each wait may last: {@code api.verdict.timeout}, {@code api.header.timeout}, {@code api.idle.timeout}, {@code api.request.timeout}. */
    public record Timeouts(Duration verdict, Duration header, Duration idle, Duration request) {}

    /**
     * Where commands go and verdicts come from: {@code api.command.topics} (empty: every routed topic), the command
     * topics' routes read from the keys the bridge reads them from, and the audit topics.
     */
    public record Topics(List<String> commandTopics, RouteSettings routing, AuditTopics auditTopics) {}

    /** The operator reads and their console: {@code api.reads.enabled}, {@code api.console.enabled}, {@code api.cookies.secure}. */
    public record Operator(boolean readsEnabled, boolean consoleEnabled, String cookiesSecure) {}

    public static final String PORT = "api.port";
    public static final String BIND_ADDRESS = "api.bind.address";
    public static final String UNAUTHENTICATED_REMOTE_ALLOWED = "api.unauthenticated.remote.allowed";
    public static final String MAX_BODY_BYTES = "api.max.body.bytes";
    public static final String MAX_OPS = "api.max.ops";
    public static final String RATE_LIMIT = "api.rate.limit";
    public static final String RATE_BURST = "api.rate.burst";
    public static final String COMMAND_TOPICS = "api.command.topics";
    public static final String VERDICT_TIMEOUT = "api.verdict.timeout";
    public static final String THREADS = "api.threads";
    public static final String SENDERS = "api.senders";
    public static final String READS_ENABLED = "api.reads.enabled";
    public static final String CONSOLE_ENABLED = "api.console.enabled";
    public static final String TLS_KEYSTORE_FILE = "api.tls.keystore.file";
    public static final String TLS_KEYSTORE_PASSWORD = "api.tls.keystore.password";
    public static final String HEADER_TIMEOUT = "api.header.timeout";
    public static final String IDLE_TIMEOUT = "api.idle.timeout";
    public static final String REQUEST_TIMEOUT = "api.request.timeout";
    public static final String MAX_CONNECTIONS = "api.max.connections";
    public static final String COOKIES_SECURE = "api.cookies.secure";

    public static ConfigDef definition() {
        return new ConfigDef()
                .include(CommonSettings.definition())
                .include(AuditTopics.definition())
                .include(RouteSettings.definition())
                .define(PORT, INT, "8081", between(0, 65535), "QUEEN_API_PORT",
                        "Port of the HTTP API (docs/http-api.md: the timer commands, and the operator routes with api.reads.enabled); 0 picks a free port.")
                .define(BIND_ADDRESS, STRING, "127.0.0.1", nonEmpty(), "QUEEN_API_BIND_ADDRESS",
                        "Address the HTTP API listens on: this host only by default. Another address (0.0.0.0 for every one, as"
                                + " in a container) serves the network, and is refused at start while a served command topic takes"
                                + " commands without a token, unless api.unauthenticated.remote.allowed=true.")
                .define(UNAUTHENTICATED_REMOTE_ALLOWED, BOOLEAN, "false", null, "QUEEN_API_UNAUTHENTICATED_REMOTE_ALLOWED",
                        "Serve a command topic without auth on a non-loopback api.bind.address: anyone who reaches api.port"
                                + " then acts as that topic's tenant (writes; with api.reads.enabled its timers, payloads, replay"
                                + " and drop). Only for a network where every peer is trusted as that tenant's admin.")
                .define(MAX_BODY_BYTES, INT, String.valueOf(4 << 20), between(1024, 64 << 20), "QUEEN_API_MAX_BODY_BYTES",
                        "Largest request body in bytes, refused (413) before it is parsed: a Content-Length above it is refused"
                                + " unread, a chunked body when it passes it. Each operation's own payload is judged by the bridge"
                                + " (bridge.payload.max.bytes, payload_too_large).")
                .define(MAX_OPS, INT, "100", between(1, 10_000), "QUEEN_API_MAX_OPS",
                        "Most operations one POST may carry; more is refused (413) before any is written.")
                .define(RATE_LIMIT, INT, "50", between(0, 1_000_000), "QUEEN_API_RATE_LIMIT",
                        "Requests per second one client may make (a token bucket per verified token sub, else per remote"
                                + " address); past it 429 with Retry-After. 0 turns the limit off.")
                .define(RATE_BURST, INT, "100", between(1, 1_000_000), "QUEEN_API_RATE_BURST",
                        "Requests one client may make at once before api.rate.limit paces it (the bucket's size).")
                .define(COMMAND_TOPICS, LIST, "", null, "QUEEN_API_COMMAND_TOPICS",
                        "The command topics the API writes to, one per tenant (each topic's tenant is the bridge's"
                                + " topic.<name>.tenant); empty = every topic of command.topics. A request goes to the topic whose"
                                + " topic.<name>.auth=jwt rules verify its bearer token, or without a token to the one topic with"
                                + " auth none. Two topics of one tenant, or two without auth, are a start-up error.")
                .define(VERDICT_TIMEOUT, DURATION, "30s", durationBetween(Duration.ofMillis(100), Duration.ofMinutes(5)),
                        "Longest wait of a request for its commands' verdicts from the audit topic; an operation without one"
                                + " by then is answered pending (202) with where its command was written.")
                .define(THREADS, INT, "16", between(2, 1024), "QUEEN_API_THREADS",
                        "Workers: requests whose work blocks (a write awaiting Kafka and its verdicts, a read awaiting PostgreSQL)"
                                + " at once, every tenant's together; 64 more wait, past that one is answered 503 with Retry-After."
                                + " Headers, tokens, refusals and bodies are handled on the server's own threads without one. More"
                                + " than api.senders.")
                .define(SENDERS, INT, "4", between(1, 256), "QUEEN_API_SENDERS",
                        "Command senders per command topic (each a Kafka producer and an audit consumer reading the whole"
                                + " audit topic), and each tenant's share of api.threads (less than it): its requests in progress"
                                + " at once, reads, writes and console pages together; one more is refused at once, 429 with"
                                + " Retry-After, nothing read or written.")
                .define(HEADER_TIMEOUT, DURATION, "5s", durationBetween(Duration.ofMillis(500), Duration.ofMinutes(1)),
                        "QUEEN_API_HEADER_TIMEOUT",
                        "Longest a client may take to send a request's line and headers, from its connection (a TLS handshake"
                                + " included) or, on a kept-alive connection, from the request's first byte; past it the"
                                + " connection is closed. No thread waits for headers meanwhile.")
                .define(IDLE_TIMEOUT, DURATION, "30s", durationBetween(Duration.ofSeconds(1), Duration.ofMinutes(10)),
                        "QUEEN_API_IDLE_TIMEOUT",
                        "Longest a connection may go without a byte moving while nothing is being worked on for it: a"
                                + " kept-alive connection between requests, a body that stops arriving, an answer the client does"
                                + " not take; then it is closed.")
                .define(REQUEST_TIMEOUT, DURATION, "10s", durationBetween(Duration.ofSeconds(1), Duration.ofMinutes(10)),
                        "QUEEN_API_REQUEST_TIMEOUT",
                        "Longest a request's body may take to arrive whole once its headers have; past it the request is"
                                + " answered 408, nothing written, and its connection closed. The body is read without holding a"
                                + " thread.")
                .define(MAX_CONNECTIONS, INT, "512", between(16, 100_000), "QUEEN_API_MAX_CONNECTIONS",
                        "Connections open at once; past it no new one is accepted until one closes (they wait in the"
                                + " kernel's backlog). Each costs a socket and a buffer, never a thread, until a request of it has"
                                + " its headers whole.")
                .define(COOKIES_SECURE, STRING, "auto", oneOf("auto", "always", "never"), "QUEEN_API_COOKIES_SECURE",
                        "When the console's cookies are marked Secure (sent by the browser over HTTPS only): auto when the"
                                + " browser reached the server over TLS (api.tls.keystore.file, or a proxy in front that sets"
                                + " X-Forwarded-Proto: https); always behind a TLS-terminating proxy that does not say so; never"
                                + " only for plain HTTP on a trusted network.")
                .define(READS_ENABLED, BOOLEAN, "false", null, "QUEEN_API_READS_ENABLED",
                        "Serve the operator read routes (pending timers and series, find, dead letters with replay and drop,"
                                + " offsets: docs/http-api.md). They read PostgreSQL through the queen_operator role's functions,"
                                + " connected with jdbc.url, jdbc.user and jdbc.password as a login of that role: checked at start"
                                + " (db.role.check), a login that is not one refuses to start. Only an admin token"
                                + " (auth.admin.claim) or the topic without auth may call them, and only for its own tenant.")
                .define(CONSOLE_ENABLED, BOOLEAN, "false", null, "QUEEN_API_CONSOLE_ENABLED",
                        "Serve the web console under /console on api.port (docs/http-api.md#console): server-rendered pages of the"
                                + " operator reads, with Replay and Drop forms for dead letters. Needs api.reads.enabled (a start-up"
                                + " error without it); the same callers as the operator routes, a browser's token kept in a cookie.")
                .define(TLS_KEYSTORE_FILE, STRING, "", null, "QUEEN_API_TLS_KEYSTORE_FILE",
                        "Serve the API over HTTPS (TLS 1.2 and 1.3) with the key and certificate chain in this file: a PKCS12 (or"
                                + " JKS) keystore, or PEM holding a PKCS#8 private key and its certificates. Empty: plain HTTP"
                                + " (then put TLS in front of it). /health and /metrics on http.port stay plain.")
                .define(TLS_KEYSTORE_PASSWORD, PASSWORD, "", null, "QUEEN_API_TLS_KEYSTORE_PASSWORD",
                        "Password of api.tls.keystore.file (a keystore's store and key password; unused for PEM). Never logged;"
                                + " also read from the file named by QUEEN_API_TLS_KEYSTORE_PASSWORD_FILE.");
    }

    public static HttpSettings from(Config c) {
        RouteSettings routing = RouteSettings.from(c);
        requireTokensBeyondLoopback(c, routing.routes());
        if (c.intValue(SENDERS) >= c.intValue(THREADS)) {
            throw new ConfigException("setting " + SENDERS + " = " + c.intValue(SENDERS) + " must be less than " + THREADS + " = "
                    + c.intValue(THREADS) + ": each of a tenant's requests waiting on verdicts holds a thread, and one tenant's must"
                    + " leave threads to the others");
        }
        return new HttpSettings(
                new Listen(c.intValue(PORT), c.string(BIND_ADDRESS), c.bool(UNAUTHENTICATED_REMOTE_ALLOWED),
                        c.string(TLS_KEYSTORE_FILE).isEmpty() ? null : Path.of(c.string(TLS_KEYSTORE_FILE)), c.string(TLS_KEYSTORE_PASSWORD)),
                new Limits(c.intValue(MAX_BODY_BYTES), c.intValue(MAX_OPS), c.intValue(RATE_LIMIT), c.intValue(RATE_BURST),
                        c.intValue(THREADS), c.intValue(SENDERS), c.intValue(MAX_CONNECTIONS)),
                new Timeouts(c.duration(VERDICT_TIMEOUT), c.duration(HEADER_TIMEOUT), c.duration(IDLE_TIMEOUT), c.duration(REQUEST_TIMEOUT)),
                new Topics(c.list(COMMAND_TOPICS), routing, AuditTopics.from(c)),
                new Operator(c.bool(READS_ENABLED), console(c), c.string(COOKIES_SECURE)),
                CommonSettings.from(c));
    }

    /**
     * A served topic without auth makes every caller its tenant's admin: on a loopback address that is this host's
     * processes, on any other the network's. The second only when api.unauthenticated.remote.allowed says so.
     */
    private static void requireTokensBeyondLoopback(Config c, TopicRoutes routes) {
        if (c.bool(UNAUTHENTICATED_REMOTE_ALLOWED) || loopback(c.string(BIND_ADDRESS))) {
            return;
        }
        List<String> served = c.list(COMMAND_TOPICS).isEmpty() ? List.copyOf(routes.tenants().keySet()) : c.list(COMMAND_TOPICS);
        for (String topic : served) {
            if (routes.routes().containsKey(topic) && routes.route(topic).auth() == null) {
                throw new ConfigException("setting " + BIND_ADDRESS + " = " + c.string(BIND_ADDRESS) + " is not a loopback address, and"
                        + " command topic " + topic + " takes commands without a token: anyone who reaches " + PORT + " would act as"
                        + " its tenant; bind 127.0.0.1, give the topic auth=jwt, or set " + UNAUTHENTICATED_REMOTE_ALLOWED + "=true");
            }
        }
    }

    private static boolean loopback(String address) {
        try {
            return InetAddress.getByName(address).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false; // the listen fails later, naming the setting
        }
    }

    /** api.console.enabled, refused without api.reads.enabled: the console is those reads drawn as pages. */
    private static boolean console(Config c) {
        if (c.bool(CONSOLE_ENABLED) && !c.bool(READS_ENABLED)) {
            throw new ConfigException(CONSOLE_ENABLED + "=true needs " + READS_ENABLED + "=true: the console shows the operator reads");
        }
        return c.bool(CONSOLE_ENABLED);
    }

    @Override
    public String toString() {
        // not the topics' routes: their token rules may hold keys (Listen's own leaves the keystore password out)
        return "HttpSettings[listen=" + listen + ", limits=" + limits + ", timeouts=" + timeouts + ", operator=" + operator
                + ", common=" + common + "]";
    }
}
