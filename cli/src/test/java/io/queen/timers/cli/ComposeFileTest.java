package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.text.Secrets;
import io.queen.timers.http.HttpSettings;
import io.queen.timers.sweeper.SweeperSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docker/docker-compose.yml, read as YAML: least privilege and a stack that comes back on its own.
 * (`.ci/run` also validates it with docker-compose; there is no Docker engine to run it here.)
 */
class ComposeFileTest {

    static final Path DOCKER = Path.of("..", "docker");
    static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Z0-9_]+)(:?[-?])?([^}]*)}");

    final String text = read(DOCKER.resolve("docker-compose.yml"));
    final JsonNode compose = yaml(text);
    final JsonNode services = compose.get("services");

    @Test
    void noPasswordHasACommittedDefault() {
        Matcher m = VARIABLE.matcher(text);
        List<String> passwords = new ArrayList<>();
        while (m.find()) {
            if (m.group(1).contains("PASSWORD")) {
                passwords.add(m.group(1));
                assertThat(m.group(2)).as("${%s…}: compose must refuse to start without it", m.group(1)).isEqualTo(":?");
            }
        }
        assertThat(passwords).contains("POSTGRES_PASSWORD", "QUEEN_JDBC_PASSWORD", "QUEEN_BRIDGE_JDBC_PASSWORD", "QUEEN_SWEEPER_JDBC_PASSWORD",
                "QUEEN_OPERATOR_JDBC_PASSWORD_PATH", "GRAFANA_ADMIN_PASSWORD");
        for (String p : passwords) {
            assertThat(read(DOCKER.resolve("env.example")).lines()).as("env.example lists %s", p).contains(p + "=");
        }
    }

    @Test
    void servicesConnectAsARoleThatIsNotTheSuperuserAndAnInitScriptCreatesIt() {
        String owner = env("migrate", "QUEEN_JDBC_USER");
        String superuser = env("postgres", "POSTGRES_USER");
        assertThat(owner).isNotEqualTo(superuser).doesNotContain("postgres");
        assertThat(strings(services.get("postgres").get("volumes"))).contains("./postgres-init:/docker-entrypoint-initdb.d:ro");
        String init = read(DOCKER.resolve("postgres-init/10-queen-role.sh"));
        assertThat(init).contains("NOSUPERUSER", "NOCREATEDB", "NOCREATEROLE", "CREATE DATABASE queen OWNER");
    }

    /** Issue 24, point 6: the owner only migrates; each service runs as a login of its own group role, checked at start. */
    @Test
    void theOwnerMigratesAndEachServiceRunsAsALoginOfItsOwnLeastPrivilegeRole() {
        String owner = env("migrate", "QUEEN_JDBC_USER");
        String bridge = env("bridge", "QUEEN_JDBC_USER");
        String sweeper = env("sweeper", "QUEEN_JDBC_USER");
        assertThat(List.of(bridge, sweeper)).doesNotContain(owner, env("postgres", "POSTGRES_USER"));
        assertThat(bridge).isNotEqualTo(sweeper);
        assertThat(env("bridge", "QUEEN_JDBC_PASSWORD")).isNotEqualTo(env("migrate", "QUEEN_JDBC_PASSWORD"));
        // the per-tenant fire budget as the sweeper ships it, on (docs/sweeper.md#the-fire-budget): not turned off here
        assertThat(services.get("sweeper").get("environment").has("QUEEN_SWEEPER_TENANT_FIRES_PER_SECOND")).isFalse();
        // the http API's reads connect as the operator login, a member of queen_operator, and write to the bridge's topics
        assertThat(env("http", "QUEEN_JDBC_USER")).isEqualTo(env("postgres", "QUEEN_OPERATOR_JDBC_USER")).isNotIn(bridge, sweeper, owner);
        assertThat(env("http", "QUEEN_COMMAND_TOPICS")).isEqualTo(env("bridge", "QUEEN_COMMAND_TOPICS"));
        for (String s : List.of("bridge", "sweeper", "http", "migrate")) {
            // the check stays on (its default): no service of the file opts out of it
            assertThat(services.get(s).get("environment").has("QUEEN_DB_ROLE_CHECK")).as(s).isFalse();
            assertThat(env(s, "QUEEN_MIGRATE_ON_START")).as(s).isEqualTo("false");
        }
        // the init script makes the group roles (the owner may not create roles) and a login in each
        String init = read(DOCKER.resolve("postgres-init/10-queen-role.sh"));
        assertThat(init).contains("CREATE ROLE queen_bridge NOLOGIN;", "CREATE ROLE queen_sweeper NOLOGIN;", "CREATE ROLE queen_operator NOLOGIN;",
                "IN ROLE queen_bridge;", "IN ROLE queen_sweeper;", "IN ROLE queen_operator;");
        assertThat(bridge).isEqualTo("${QUEEN_BRIDGE_JDBC_USER:-timers_bridge}");
        assertThat(sweeper).isEqualTo("${QUEEN_SWEEPER_JDBC_USER:-timers_sweeper}");
        assertThat(env("postgres", "QUEEN_BRIDGE_JDBC_USER")).isEqualTo(bridge);
        assertThat(env("postgres", "QUEEN_SWEEPER_JDBC_USER")).isEqualTo(sweeper);
        assertThat(env("postgres", "QUEEN_OPERATOR_JDBC_USER")).isNotBlank();
        // issue 47: the owner's migrate binds the bridge group to the bridge's login, with the topics the bridge reads
        assertThat(env("migrate", "QUEEN_BRIDGE_LOGIN")).isEqualTo(bridge);
        assertThat(env("migrate", "QUEEN_COMMAND_TOPICS")).isEqualTo(env("bridge", "QUEEN_COMMAND_TOPICS"));
    }

    private String env(String service, String name) {
        JsonNode v = services.get(service).get("environment").get(name);
        assertThat(v).as("%s sets %s", service, name).isNotNull();
        return v.asText();
    }

    @Test
    void publishedPortsBindToTheLoopbackAndTheHostPortIsSettable() {
        int published = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = services.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> s = it.next();
            for (String port : strings(s.getValue().get("ports"))) {
                published++;
                assertThat(port).as("service %s publishes %s", s.getKey(), port).startsWith("127.0.0.1:${QUEEN_");
            }
        }
        assertThat(published).isEqualTo(5);   // PostgreSQL, Kafka, the HTTP API, and Prometheus and Grafana (profile observability)
        assertThat(services.get("kafka").get("environment").get("KAFKA_ADVERTISED_LISTENERS").asText())
                .contains("HOST://127.0.0.1:${QUEEN_KAFKA_HOST_PORT:-29092}");
    }

    @Test
    void postgresIsCheckedOverTcpTheOneShotsRetryAndTheServersRestart() {
        assertThat(strings(services.get("postgres").get("healthcheck").get("test"))).anySatisfy(t ->
                assertThat(t).contains("pg_isready").contains("-h 127.0.0.1"));
        assertThat(services.get("migrate").get("restart").asText()).isEqualTo("on-failure");
        assertThat(services.get("kafka-topics").get("restart").asText()).isEqualTo("on-failure");
        assertThat(services.get("postgres").get("restart").asText()).isEqualTo("unless-stopped");
        assertThat(services.get("kafka").get("restart").asText()).isEqualTo("unless-stopped");
    }

    /** Issue 24: a jwt topic's tokens are checked at the record's timestamp, so the broker stamps it (the bridge refuses otherwise). */
    @Test
    void theCommandTopicGetsBrokerStampedTimestampsAlsoOnAnOlderVolume() {
        String script = String.join("\n", strings(services.get("kafka-topics").get("command")));
        assertThat(script).containsPattern("--create --if-not-exists --topic queen\\.timers\\.commands .*"
                + "--config message\\.timestamp\\.type=LogAppendTime\\n");
        assertThat(script).contains("kafka-configs.sh --bootstrap-server kafka:9092 --alter --entity-type topics"
                + " --entity-name queen.timers.commands --add-config message.timestamp.type=LogAppendTime");
    }

    /**
     * The services read their secrets from files, the database passwords aside: the payload encryption keys reach the
     * bridge as files of compose secrets (/run/secrets/...), never as variables, which `docker inspect`, /proc/<pid>/environ
     * and every process in the container show. Each secret a process declares (a password key of its settings, a Kafka
     * secret setting) is set only through its _FILE variable, naming a secret the service mounts and the file defines.
     * PRICE, the one exception: QUEEN_JDBC_PASSWORD stays a variable, so compose still refuses to start without each
     * password (noPasswordHasACommittedDefault), which it cannot do for a file; the manifests have no exception
     * (DeploymentManifestsTest#noSecretIsInAnEnvironmentVariable).
     */
    @Test
    void theServicesSecretsAreFilesOfComposeSecretsTheDatabasePasswordsAside() {
        JsonNode defined = compose.get("secrets");
        for (String service : List.of("bridge", "sweeper", "http", "migrate")) {
            JsonNode s = services.get(service);
            String process = strings(s.get("command")).get(0);
            ConfigDef def = switch (process) {
                case "bridge" -> BridgeSettings.definition();
                case "sweeper" -> SweeperSettings.definition();
                case "http" -> HttpSettings.definition();
                case "migrate" -> MigrateSettings.definition();
                default -> throw new AssertionError(service + " runs " + process);
            };
            List<String> mounted = new ArrayList<>();
            if (s.get("secrets") != null) {
                s.get("secrets").forEach(x -> mounted.add(x.isTextual() ? x.asText() : x.get("source").asText()));
            }
            for (Iterator<String> it = s.get("environment").fieldNames(); it.hasNext(); ) {
                String name = it.next();
                String plain = name.endsWith("_FILE") ? name.substring(0, name.length() - "_FILE".length()) : null;
                if (secret(def, name) && (!name.equals("QUEEN_JDBC_PASSWORD") || service.equals("http"))) {
                    throw new AssertionError(service + ": " + name + " is a secret in the environment: mount it as a compose secret"
                            + " and set " + name + "_FILE to /run/secrets/<its name>");
                }
                if (plain != null && secret(def, plain)) {
                    String path = env(service, name);
                    assertThat(path).as("%s: %s names a compose secret", service, name).startsWith("/run/secrets/");
                    String secret = path.substring("/run/secrets/".length());
                    assertThat(mounted).as("%s mounts secret %s (%s)", service, secret, name).contains(secret);
                    assertThat(defined != null && defined.has(secret)).as("the file defines secret %s", secret).isTrue();
                }
            }
        }
        // the operator login's password, the exception's exception: a file, read by the http API and by the init script that
        // creates the login (one source), required as the variables are
        assertThat(env("http", "QUEEN_JDBC_PASSWORD_FILE")).isEqualTo("/run/secrets/queen_operator_jdbc_password");
        assertThat(env("postgres", "QUEEN_OPERATOR_JDBC_PASSWORD_FILE")).isEqualTo(env("http", "QUEEN_JDBC_PASSWORD_FILE"));
        assertThat(services.get("postgres").get("environment").has("QUEEN_OPERATOR_JDBC_PASSWORD")).isFalse();
        assertThat(strings(services.get("postgres").get("secrets"))).contains("queen_operator_jdbc_password");
        assertThat(defined.get("queen_operator_jdbc_password").get("file").asText()).startsWith("${QUEEN_OPERATOR_JDBC_PASSWORD_PATH:?");
        assertThat(read(DOCKER.resolve("postgres-init/10-queen-role.sh"))).contains("QUEEN_OPERATOR_JDBC_PASSWORD=\"$(cat \"$QUEEN_OPERATOR_JDBC_PASSWORD_FILE\")\"");
        assertThat(env("bridge", "QUEEN_ENCRYPTION_KEY_FILE")).isEqualTo("/run/secrets/queen_encryption_key");
        assertThat(env("bridge", "QUEEN_ENCRYPTION_KEYS_PREVIOUS_FILE")).isEqualTo("/run/secrets/queen_encryption_keys_previous");
        // no key unless the operator names a file: an empty one (docs/security.md#payload-encryption)
        assertThat(defined.get("queen_encryption_key").get("file").asText()).isEqualTo("${QUEEN_ENCRYPTION_KEY_PATH:-/dev/null}");
        assertThat(defined.get("queen_encryption_keys_previous").get("file").asText()).isEqualTo("${QUEEN_ENCRYPTION_KEYS_PREVIOUS_PATH:-/dev/null}");
        assertThat(read(DOCKER.resolve("env.example"))).contains("# QUEEN_ENCRYPTION_KEY_PATH=", "# QUEEN_ENCRYPTION_KEYS_PREVIOUS_PATH=");
    }

    /**
     * The HTTP API as compose runs it: the image every service runs, started after the schema and the topics, restarted
     * when it stops, healthy while /health/ready on http.port says so (as the bridge and the sweeper); its settings pass
     * the API's own start-up checks (a topic without a token is served beyond the loopback only by a stated choice) with
     * the operator reads and the console on; only api.port is published (the health and metrics port stays inside).
     */
    @Test
    void theHttpApiRunsFromTheImageWithItsHealthCheckAndPublishesOnlyItsApiPort() {
        JsonNode http = services.get("http");
        assertThat(http.get("image").asText()).isEqualTo(services.get("bridge").get("image").asText());
        assertThat(strings(http.get("command"))).containsExactly("http");
        assertThat(http.get("restart").asText()).isEqualTo("unless-stopped");
        assertThat(http.get("depends_on").get("migrate").get("condition").asText()).isEqualTo("service_completed_successfully");
        assertThat(http.get("depends_on").get("kafka-topics").get("condition").asText()).isEqualTo("service_completed_successfully");
        Map<String, String> env = new java.util.LinkedHashMap<>();
        http.get("environment").fields().forEachRemaining(e -> env.put(e.getKey(), resolved(e.getValue().asText())));
        env.remove("QUEEN_JDBC_PASSWORD_FILE");   // /run/secrets/… exists in the container, not here
        HttpSettings settings = HttpSettings.from(io.queen.timers.core.config.ConfigLoader.load(HttpSettings.definition(), null, env));
        assertThat(settings.operator().readsEnabled()).isTrue();
        assertThat(settings.operator().consoleEnabled()).isTrue();
        int ops = settings.common().ops().httpPort();
        assertThat(strings(http.get("healthcheck").get("test"))).contains("http://127.0.0.1:" + ops + "/health/ready");
        assertThat(http.get("healthcheck").has("disable")).isFalse();
        assertThat(strings(http.get("ports"))).singleElement().satisfies(p -> assertThat(p).endsWith(":" + settings.listen().port()));
        assertThat(http.has("deploy")).as("one replica: a published host port is taken once").isFalse();
    }

    /** A compose value with its variables at their defaults ({@code ${X:-d}} → d) and each required one ({@code ${X:?…}}) as "x". */
    static String resolved(String value) {
        Matcher m = VARIABLE.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(m.group(2) != null && m.group(2).endsWith("?") ? "x" : m.group(3)));
        }
        return m.appendTail(out).toString();
    }

    /** The default compose gives variable {@code name} where it first reads it ({@code ${NAME:-default}}). */
    static String composeDefault(String name) {
        Matcher m = VARIABLE.matcher(read(DOCKER.resolve("docker-compose.yml")));
        while (m.find()) {
            if (m.group(1).equals(name) && ":-".equals(m.group(2))) {
                return m.group(3);
            }
        }
        throw new AssertionError("docker-compose.yml gives " + name + " no default");
    }

    /** A variable that carries a secret itself: a password key of the process, or a Kafka secret setting (as ConfigLoader reads them). */
    private static boolean secret(ConfigDef def, String name) {
        boolean password = def.keys().stream().anyMatch(k -> k.type() == ConfigDef.Type.PASSWORD && k.env().equals(name));
        return password || name.startsWith("QUEEN_KAFKA_") && !name.endsWith("_FILE") && def.keys().stream().noneMatch(k -> k.env().equals(name))
                && Secrets.isSecretSetting(name.substring("QUEEN_KAFKA_".length()).toLowerCase(Locale.ROOT).replace('_', '.'));
    }

    @Test
    void theEnvFileStaysOutOfGitAndTheImageAndTheImageTagIsOneName() {
        assertThat(read(Path.of("..", ".gitignore")).lines()).contains("/docker/.env", "/docker/secrets/");
        assertThat(read(Path.of("..", ".dockerignore")).lines()).contains("docker/.env", "docker/secrets");
        String image = services.get("bridge").get("image").asText();
        assertThat(image).isEqualTo("queen-timers:local");
        assertThat(services.get("migrate").get("image").asText()).isEqualTo(image);
        String header = read(DOCKER.resolve("Dockerfile")).lines().takeWhile(l -> l.startsWith("#")).reduce("", (a, b) -> a + b + "\n");
        assertThat(header).contains("-t " + image + " ").contains("docker run " + image + " ");
        assertThat(read(Path.of("..", "docs", "operations.md"))).contains(image);
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        if (array != null) {
            array.forEach(n -> out.add(n.asText()));
        }
        return out;
    }

    private static JsonNode yaml(String text) {
        try {
            // SnakeYAML resolves the anchors and `<<` merge keys as compose does; Jackson then walks the tree
            Object tree = new org.yaml.snakeyaml.Yaml().load(text);
            return new ObjectMapper().valueToTree(tree);
        } catch (Exception e) {
            throw new IllegalStateException("docker-compose.yml is not YAML: " + e.getMessage(), e);
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
