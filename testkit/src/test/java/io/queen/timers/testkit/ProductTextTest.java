package io.queen.timers.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What ships says why in words: no issue number and no dated measurement in the main sources of a module the BOM
 * publishes. A number ages with the code it describes; its home is bench/results and docs/benchmarks.md, where it has
 * its conditions beside it, and the history of a change is the repository's. Checked on the text, so a comment counts.
 *
 * <p>One exception, for dates only: the migrations' storage blocks, where a storage setting carries the date it was
 * measured, the symptom and the number (a released migration never changes, so its block stays what it was when it
 * shipped). An instant written out as an example ({@code 2026-12-24T18:00:00Z}) is not a measurement.
 */
class ProductTextTest {

    static final Pattern ISSUE = Pattern.compile("(?i)\\bissues?[ _#-]?\\d+|\\bISSUE_\\d+");
    /** A calendar date that is not the start of an instant written out. */
    static final Pattern DATE = Pattern.compile("\\b20\\d\\d-[01]\\d-[0-3]\\d\\b(?!T)");
    static final Pattern BOM_MODULE = Pattern.compile("<artifactId>queen-timers-([a-z0-9-]+)</artifactId>");

    @Test
    void noIssueNumberNorDatedMeasurementInWhatShips() throws IOException {
        Path root = TestLanesTest.repository();
        Set<String> modules = publishedModules(root);
        assertThat(modules).as("the BOM's modules").contains("bridge", "sweeper", "http", "core", "sql");
        Set<String> found = new TreeSet<>();
        for (String module : modules) {
            Path main = root.resolve(module).resolve("src/main");
            if (!Files.isDirectory(main)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(main)) {
                for (Path p : files.filter(Files::isRegularFile).toList()) {
                    String rel = root.relativize(p).toString().replace('\\', '/');
                    boolean migration = rel.contains("/db/migration/");
                    List<String> lines = read(p);
                    for (int i = 0; i < lines.size(); i++) {
                        String line = lines.get(i);
                        find(ISSUE.matcher(line), rel, i, found);
                        if (!migration) {
                            find(DATE.matcher(line), rel, i, found);
                        }
                    }
                }
            }
        }
        assertThat(found).as("issue numbers or dated measurements in the main sources of published modules: say the why in"
                + " words, and put the figure in bench/results and docs/benchmarks.md").isEmpty();
    }

    static Set<String> publishedModules(Path root) throws IOException {
        Set<String> modules = new TreeSet<>();
        Matcher m = BOM_MODULE.matcher(Files.readString(root.resolve("bom/pom.xml"), StandardCharsets.UTF_8));
        while (m.find()) {
            if (!m.group(1).equals("bom") && Files.isDirectory(root.resolve(m.group(1)))) {
                modules.add(m.group(1));
            }
        }
        return modules;
    }

    private static void find(Matcher m, String file, int line, Set<String> found) {
        while (m.find()) {
            found.add(file + ":" + (line + 1) + ": " + m.group());
        }
    }

    private static List<String> read(Path p) {
        try {
            return Files.readAllLines(p, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
