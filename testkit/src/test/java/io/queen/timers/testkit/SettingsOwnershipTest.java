package io.queen.timers.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * One owner per setting: the parsed {@code Config} is read only by a {@code *Settings} class (its
 * {@code from(Config)}) and by the config package itself; every component takes the typed records those build. Checked
 * on the text of every module's main sources: a class that names {@code io.queen.timers.core.config.Config} (an import,
 * a static import or a qualified name) and is neither fails. The price of a text scan: a class reaching a Config
 * through {@code var} without naming the type passes unseen.
 */
class SettingsOwnershipTest {

    /** The type, imported or written out; not ConfigDef, ConfigException or ConfigLoader. */
    static final Pattern NAMES_CONFIG = Pattern.compile("io\\.queen\\.timers\\.core\\.config\\.Config\\b(?![A-Za-z])");
    static final String CONFIG_PACKAGE = "io/queen/timers/core/config/";

    /**
     * Classes that carry a Config to a service's {@code *Settings.from} without reading a setting of it: a service's
     * kind (its definition, and the start that builds the service's settings from the Config) and the test stack, which
     * makes one Config per service from its overrides and hands it to that start.
     */
    static final Set<String> CARRIERS = Set.of("ServiceKind", "Stack");

    @Test
    void onlySettingsClassesReadTheParsedConfig() throws IOException {
        Set<String> wrong = new TreeSet<>();
        Path root = TestLanesTest.repository();
        try (Stream<Path> files = Files.walk(root)) {
            files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> p.toString().replace('\\', '/').contains("/src/main/java/"))
                    .filter(p -> !p.toString().replace('\\', '/').contains("/" + CONFIG_PACKAGE))
                    .filter(p -> !TestLanesTest.simpleName(p).endsWith("Settings"))
                    .filter(p -> !CARRIERS.contains(TestLanesTest.simpleName(p)))
                    .forEach(p -> {
                        if (NAMES_CONFIG.matcher(read(p)).find()) {
                            wrong.add(root.relativize(p).toString());
                        }
                    });
        }
        assertThat(wrong).as("these main classes read the parsed Config: give them the typed *Settings records instead,"
                + " built by the module's *Settings.from(Config) (one owner per setting, docs/configuration.md)").isEmpty();
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
