package io.queen.timers.release;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The release folder that {@code -Prelease} gathers (docs/install.md#what-a-release-holds): exactly the published
 * artifacts, each jar with its sources, javadoc and SBOM, the BOM, the release notes, and a SHA256SUMS whose every line
 * matches its file. Runs only in the release profile, which passes release.dir (.ci/run builds it).
 */
class ReleaseFolderTest {

    static final String VERSION = System.getProperty("project.version");
    static final List<String> JARS = List.of("client", "sql", "log", "core", "relay", "inspect", "routes", "bridge", "sweeper",
            "http", "cli", "local", "embedded", "stack", "test");

    /** The runnable shaded jars, by file name, with the main class their manifest must name. */
    static final Map<String, String> LAUNCHERS = Map.of(
            "queen-timers.jar", "io.queen.timers.local.LocalLauncher",
            "queen-timers-service.jar", "io.queen.timers.cli.QueenTimers");

    static Path folder() {
        String dir = System.getProperty("release.dir");
        assumeTrue(dir != null, "release.dir is set by -Prelease only");
        Path folder = Path.of(dir);
        assertThat(folder).as("the release folder").isDirectory();
        return folder;
    }

    /** The published artifacts' file names, besides any the image step adds. */
    static Set<String> expected() {
        Set<String> names = new TreeSet<>();
        names.add("queen-timers-bom-" + VERSION + ".pom");
        names.add("queen-timers-bom-" + VERSION + "-cyclonedx.json");
        for (String m : JARS) {
            String base = "queen-timers-" + m + "-" + VERSION;
            names.addAll(List.of(base + ".jar", base + "-sources.jar", base + "-javadoc.jar", base + "-cyclonedx.json"));
        }
        names.addAll(LAUNCHERS.keySet());
        names.add("queen-timers-image-" + VERSION + ".tar"); // module image (ImageIT reads and runs it)
        names.add("queen-timers-image-" + VERSION + "-cyclonedx.json"); // its SBOM (ImageIT checks it against the layers)
        names.addAll(List.of("RELEASE-NOTES.md", Checksums.FILE));
        return names;
    }

    @Test
    void theFolderHoldsEveryPublishedArtifactAndNothingElse() throws Exception {
        Path folder = folder();
        Set<String> present;
        try (Stream<Path> s = Files.list(folder)) {
            present = s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
        assertThat(present).isEqualTo(expected());
        for (String m : JARS) {
            String base = "queen-timers-" + m + "-" + VERSION;
            try (JarFile sources = new JarFile(folder.resolve(base + "-sources.jar").toFile());
                 JarFile javadoc = new JarFile(folder.resolve(base + "-javadoc.jar").toFile())) {
                assertThat(sources.stream().anyMatch(e -> e.getName().endsWith(".java"))).as(base + "-sources.jar").isTrue();
                assertThat(javadoc.getEntry("index.html")).as(base + "-javadoc.jar").isNotNull();
            }
            String sbom = Files.readString(folder.resolve(base + "-cyclonedx.json"));
            assertThat(sbom).as(base + " SBOM").contains("\"bomFormat\" : \"CycloneDX\"")
                    .contains("\"name\" : \"queen-timers-" + m + "\"").contains("\"version\" : \"" + VERSION + "\"");
        }
        for (Map.Entry<String, String> launcher : LAUNCHERS.entrySet()) {
            try (JarFile jar = new JarFile(folder.resolve(launcher.getKey()).toFile())) {
                assertThat(jar.getManifest().getMainAttributes().getValue("Main-Class")).as(launcher.getKey())
                        .startsWith(launcher.getValue());
                assertThat(jar.getManifest().getMainAttributes().getValue("Implementation-Version")).as(launcher.getKey())
                        .isEqualTo(VERSION);
                // shaded: the PostgreSQL driver and the Kafka client inside
                assertThat(jar.getEntry("org/postgresql/Driver.class")).as(launcher.getKey()).isNotNull();
                assertThat(jar.getEntry("org/apache/kafka/clients/producer/KafkaProducer.class")).as(launcher.getKey()).isNotNull();
            }
        }
        assertThat(Files.readString(folder.resolve("queen-timers-bom-" + VERSION + ".pom")))
                .contains("<version>" + VERSION + "</version>").doesNotContain("${revision}");
    }

    @Test
    void everyChecksumMatchesAndEveryFileHasOne() throws Exception {
        Path folder = folder();
        Map<String, String> sums = new LinkedHashMap<>();
        for (String line : Files.readAllLines(folder.resolve(Checksums.FILE), StandardCharsets.UTF_8)) {
            assertThat(line).as("a sha256sum line").matches("[0-9a-f]{64}  [^/ ]+");
            sums.put(line.substring(66), line.substring(0, 64));
        }
        Set<String> files = new TreeSet<>(expected());
        files.remove(Checksums.FILE);
        try (Stream<Path> s = Files.list(folder)) {
            s.map(p -> p.getFileName().toString()).filter(n -> !n.equals(Checksums.FILE)).forEach(files::add);
        }
        assertThat(sums.keySet()).as("SHA256SUMS covers every file").containsExactlyInAnyOrderElementsOf(files);
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, String> e : sums.entrySet()) {
            if (!Checksums.sha256(folder.resolve(e.getKey())).equals(e.getValue())) {
                wrong.add(e.getKey());
            }
        }
        assertThat(wrong).as("files whose SHA-256 differs from SHA256SUMS").isEmpty();
    }

    @Test
    void theNotesAreThisVersionsSectionOfTheChangelog() throws Exception {
        Path folder = folder();
        String notes = Files.readString(folder.resolve("RELEASE-NOTES.md"));
        assertThat(notes).isEqualTo(ReleaseNotes.notes(Files.readAllLines(Path.of("../CHANGELOG.md")), VERSION));
    }
}
