package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A released versioned migration is never edited (docs/schema-and-roles.md#schema): every database it ran on recorded its
 * checksum, and Flyway refuses one that differs; nothing rewrites a recorded checksum. Every shipped V file and its
 * checksum is pinned in src/test/resources/released-migrations.txt, so an edit fails the build here and not in a user's
 * database; a new V file adds its line in the commit that adds it.
 */
class ReleasedMigrationsTest {

    private static final Path MIGRATIONS = Path.of("src/main/resources/db/migration");

    @Test
    void noReleasedMigrationChangedAndEveryMigrationIsListed() throws IOException {
        Map<String, Integer> released = new TreeMap<>();
        for (String line : Files.readAllLines(Path.of("src/test/resources/released-migrations.txt"), StandardCharsets.UTF_8)) {
            if (!line.isBlank() && !line.startsWith("#")) {
                String[] f = line.trim().split(" ");
                released.put(f[0], Integer.parseInt(f[1]));
            }
        }
        Map<String, Integer> now;
        try (Stream<Path> files = Files.list(MIGRATIONS)) {
            now = files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("V") && n.endsWith(".sql"))
                    .collect(Collectors.toMap(n -> n, n -> Migrations.checksum("db/migration/" + n), (a, b) -> a, TreeMap::new));
        }
        java.util.List<String> differ = new java.util.ArrayList<>();
        released.forEach((file, sum) -> {
            if (!now.containsKey(file)) {
                differ.add(file + ": released, now missing");
            } else if (!now.get(file).equals(sum)) {
                differ.add(file + ": released with checksum " + sum + ", now " + now.get(file));
            }
        });
        now.keySet().stream().filter(f -> !released.containsKey(f)).forEach(f -> differ.add(f + ": not in released-migrations.txt"));
        assertThat(differ).as("an edited released text breaks every database that ran it: add a new V file instead").isEmpty();
    }
}
