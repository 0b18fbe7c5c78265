package io.queen.timers.e2e.http;

import io.queen.timers.http.HttpMain;
import io.queen.timers.http.HttpSettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.core.db.DatabaseRole;
import io.queen.timers.core.health.Health;
import io.queen.timers.core.config.HealthSettings;
import io.queen.timers.core.health.ReadinessCheck;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.routes.auth.TestTokens;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.Sweepers;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The operator routes' tests' stack (HttpReadsIT, ConsoleIT, ConsoleBrowserIT): a real bridge, sweeper, broker and
 * PostgreSQL, and the HTTP process with api.reads.enabled (plus the caller's overrides), connected as a login of
 * queen_operator with db.role.check on. Tenant B's topic takes no token; tenant A's takes jwt with an admin claim.
 */
public final class OperatorStack implements AutoCloseable {

    public static final UUID TENANT_A = UUID.fromString("00000000-0000-0000-0000-0000000000a2");
    public static final UUID TENANT_B = UUID.fromString("00000000-0000-0000-0000-0000000000b2");
    /** The tenant of {@link #stalled}, the topic no bridge reads. */
    public static final UUID TENANT_C = UUID.fromString("00000000-0000-0000-0000-0000000000c3");
    public static final String OPERATOR_PASSWORD = "operator-pw";
    public static final String ADMIN_CLAIM = "queen_admin";
    public static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    final PostgresDatabase db;
    /** The bridge's settings, as the superuser. */
    public final Map<String, String> settings = new LinkedHashMap<>();
    /** The API's: the bridge's, and with {@link #shipped} tenant C's topic, which the bridge does not read; {@link #config} starts from them. */
    private final Map<String, String> apiSettings = new LinkedHashMap<>();
    /** The login of queen_operator the API's reads connect as. */
    public final String operatorLogin;
    /** With {@link #shipped}: tenant C's jwt topic, served by the API and read by no bridge; null otherwise. */
    public final String stalled;
    public final TestTokens.Signer signer;
    public final String open;
    /** The jwt topics' verification keys (a JWKS of {@link #signer}'s public key). */
    public final Path keys;
    public final String jwt;
    public final String auditB;
    private final BridgeMain bridge;
    private final SweeperMain sweeper;
    public final HttpMain api;

    /** {@code name} prefixes the topics and the operator login; {@code apiOverrides} are the API's settings beyond the reads. */
    public OperatorStack(PostgresDatabase db, String name, Map<String, String> apiOverrides) throws Exception {
        this(db, name, apiOverrides, false);
    }

    /**
     * The API as it ships: its documented defaults (bind address, rate limit, threads, senders, verdict timeout), only its
     * two ports picked free, reads on as a login of queen_operator. It also serves tenant C's jwt topic {@link #stalled},
     * which no bridge reads: a tenant whose topic is backlogged (its requests wait for verdicts that do not come).
     */
    public static OperatorStack shipped(PostgresDatabase db, String name, Map<String, String> apiOverrides) throws Exception {
        return new OperatorStack(db, name, apiOverrides, true);
    }

    private OperatorStack(PostgresDatabase db, String name, Map<String, String> apiOverrides, boolean shipped) throws Exception {
        this.db = db;
        open = TestKafka.newTopic(name + "-open", 1);
        jwt = TestKafka.newTopic(name + "-jwt", 1, TestKafka.BROKER_TIMESTAMPS);
        String auditA = TestKafka.newTopic(name + "-audit-a", 1);
        auditB = TestKafka.newTopic(name + "-audit-b", 1);
        signer = TestTokens.ec("k1");
        keys = Files.createTempDirectory(name + "-keys").resolve("keys.jwks");
        TestTokens.writeJwks(keys, List.of(signer));
        settings.put("jdbc.url", db.jdbcUrl());
        settings.put("jdbc.user", db.user());
        settings.put("jdbc.password", db.password());
        settings.put("db.role.check", "false");
        settings.put("jdbc.pool.size", "4");
        settings.put("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        settings.put("command.topics", open + "," + jwt);
        settings.put("topic." + open + ".tenant", TENANT_B.toString());
        settings.put("topic." + jwt + ".tenant", TENANT_A.toString());
        settings.put("topic." + jwt + ".auth", "jwt");
        settings.put("topic." + jwt + ".auth.keys.file", keys.toString());
        settings.put("topic." + jwt + ".auth.audience", TestTokens.AUDIENCE);
        settings.put("topic." + jwt + ".auth.issuer", TestTokens.ISSUER);
        settings.put(RouteSettings.AUTH_ADMIN_CLAIM, ADMIN_CLAIM);
        settings.put("audit.topic", auditA);
        settings.put("audit.tenant.topics", TENANT_A + "=" + auditA + "," + TENANT_B + "=" + auditB);
        settings.put("bridge.group.id", "g-" + UUID.randomUUID());
        settings.put("bridge.start.position", "earliest");
        settings.put("http.port", "0");
        settings.put("api.port", "0");
        if (!shipped) {
            settings.put("api.bind.address", "127.0.0.1");
            settings.put("api.rate.limit", "0");
            settings.put("api.verdict.timeout", "30s");
            settings.put("api.senders", "1");
        }
        settings.put("audit.relay.poll.interval", "50ms");
        bridge = BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(settings)), Dependencies.defaults(new SimpleMeterRegistry()));
        sweeper = Sweepers.start(db, Map.of());
        // the API reads as a login of queen_operator, and the start check holds it to that role
        String role = name.replace('-', '_') + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        execute("CREATE ROLE " + role + " LOGIN PASSWORD '" + OPERATOR_PASSWORD + "' IN ROLE " + DatabaseRole.OPERATOR);
        // a host's readiness, as ServiceHost gives the process one: here one check, answered from memory
        Health health = Health.from(new HealthSettings(Duration.ofMinutes(1), Duration.ofMinutes(1)));
        health.add(ReadinessCheck.of("database", java.util.Optional::empty));
        this.operatorLogin = role;
        apiSettings.putAll(settings);
        if (shipped) {
            stalled = TestKafka.newTopic(name + "-stalled", 1, TestKafka.BROKER_TIMESTAMPS);
            String auditC = TestKafka.newTopic(name + "-audit-c", 1);
            apiSettings.put("command.topics", open + "," + jwt + "," + stalled);
            apiSettings.put("topic." + stalled + ".tenant", TENANT_C.toString());
            apiSettings.put("topic." + stalled + ".auth", "jwt");
            apiSettings.put("topic." + stalled + ".auth.keys.file", keys.toString());
            apiSettings.put("topic." + stalled + ".auth.audience", TestTokens.AUDIENCE);
            apiSettings.put("topic." + stalled + ".auth.issuer", TestTokens.ISSUER);
            apiSettings.put("audit.tenant.topics", settings.get("audit.tenant.topics") + "," + TENANT_C + "=" + auditC);
        } else {
            stalled = null;
        }
        this.api = HttpMain.start(operatorConfig(apiOverrides), Dependencies.defaults(new SimpleMeterRegistry()).withHealth(health));
    }

    /** The API's settings and {@code overrides}, connected as the superuser (db.role.check off). */
    public HttpSettings config(Map<String, String> overrides) {
        Map<String, String> s = new HashMap<>(apiSettings);
        s.putAll(overrides);
        return HttpSettings.from(HttpSettings.definition().parse(s));
    }

    /** As the stack's own API: reads on, as the operator login (db.role.check on), and {@code overrides}. */
    public HttpSettings operatorConfig(Map<String, String> overrides) {
        return config(operatorSettings(overrides));
    }

    /** The settings {@link #operatorConfig} parses, as a config file would hold them (for an API in a process of its own). */
    public Map<String, String> operatorSettings(Map<String, String> overrides) {
        Map<String, String> s = new HashMap<>(apiSettings);
        s.putAll(Map.of("api.reads.enabled", "true", "db.role.check", "true", "jdbc.user", operatorLogin, "jdbc.password", OPERATOR_PASSWORD));
        s.putAll(overrides);
        return s;
    }

    /** A token of tenant C with the admin claim: its operator reads. */
    public String stalledAdminToken() {
        return signer.sign(TestTokens.claims("c-ops", Instant.now(), TENANT_C).claim(ADMIN_CLAIM, true).build());
    }

    /** A token of tenant C, for the topic no bridge reads ({@link #shipped}). */
    public String stalledToken(String sub) {
        return signer.sign(TestTokens.claims(sub, Instant.now(), TENANT_C).build());
    }

    public String adminToken() {
        return signer.sign(TestTokens.claims("ops", Instant.now(), TENANT_A).claim(ADMIN_CLAIM, true).build());
    }

    public String producerToken() {
        return signer.sign(TestTokens.claims("billing", Instant.now(), TENANT_A).build());
    }

    public String url(String path) {
        return "http://127.0.0.1:" + api.port() + path;
    }

    /** Schedules through the JSON route (a token: its topic; none: the open one), answered by the bridge's verdicts. */
    public HttpResponse<String> schedule(String json, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url("/api/v1/timers"))).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The sweeper's dead-letter of these staged timers, as after sweeper.max.attempts failures, under its claim (as after a sweeper gave up on them). */
    public void deadLetter(UUID tenant, String queue, String... keys) throws Exception {
        String token = UUID.randomUUID().toString();
        execute("UPDATE queen.log_timers SET attempts = 5, last_error = 'downstream said no', claim_token = '" + token
                + "', claimed_until = now() + interval '1 minute' WHERE queue = '" + queue + "'");
        StringBuilder rows = new StringBuilder();
        for (String k : keys) {
            rows.append(rows.length() == 0 ? "" : ",").append("{\"tenant_id\":\"").append(tenant).append("\",\"queue\":\"").append(queue)
                    .append("\",\"timer_key\":\"").append(k).append("\",\"claim_token\":\"").append(token).append("\"}");
        }
        execute("SELECT count(*) FROM queen.timer_dead_letter_v3('[" + rows + "]'::jsonb, 5)");
    }

    public void execute(String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    @Override
    public void close() {
        for (AutoCloseable c : new AutoCloseable[] {api, sweeper, bridge}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // the next one still stops
            }
        }
    }
}
