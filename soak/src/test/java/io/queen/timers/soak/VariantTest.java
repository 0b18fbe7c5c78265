package io.queen.timers.soak;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.sweeper.SweeperSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The baseline variant is what ships: a report's "baseline" row must measure the defaults, not an older set. */
class VariantTest {

    private static final Path MIGRATIONS = Path.of("../sql/src/main/resources/db/migration");
    private static final Pattern ALTER = Pattern.compile("ALTER TABLE queen\\.log_timers SET\\s*\\(([^)]*)\\)", Pattern.CASE_INSENSITIVE);

    @Test
    void baselineIsTheStorageTheMigrationsLeaveAndTheSweepersDefaults() throws IOException {
        Map<String, String> storage = storageAfterAllMigrations();
        Variant b = Variant.BASELINE;
        assertThat(Integer.parseInt(storage.get("fillfactor"))).as("fillfactor").isEqualTo(b.fillfactor());
        assertThat(Double.parseDouble(storage.get("autovacuum_vacuum_scale_factor"))).isEqualTo(b.vacuumScaleFactor());
        assertThat(Integer.parseInt(storage.get("autovacuum_vacuum_threshold"))).isEqualTo(b.vacuumThreshold());
        assertThat(Double.parseDouble(storage.get("autovacuum_vacuum_insert_scale_factor"))).isEqualTo(b.vacuumInsertScaleFactor());

        var sweeper = SweeperSettings.definition();
        assertThat(b.sweeperSettings()).containsEntry(SweeperSettings.BATCH_SIZE, sweeper.key(SweeperSettings.BATCH_SIZE).defaultValue())
                .containsEntry(SweeperSettings.LEASE, sweeper.key(SweeperSettings.LEASE).defaultValue())
                .containsEntry(SweeperSettings.PER_TENANT_PER_SHARD, sweeper.key(SweeperSettings.PER_TENANT_PER_SHARD).defaultValue());
    }

    @Test
    void everyOtherVariantChangesSomethingAndNamesAreUnique() {
        List<Variant> all = Variant.all();
        assertThat(all.get(0)).isEqualTo(Variant.BASELINE);
        assertThat(all.stream().map(Variant::name).distinct().count()).isEqualTo(all.size());
        all.stream().skip(1).forEach(v -> assertThat(v).as(v.name()).usingRecursiveComparison().ignoringFields("name", "changes")
                .isNotEqualTo(Variant.BASELINE));
    }

    /** log_timers' storage parameters after every {@code ALTER TABLE queen.log_timers SET (...)}, in version order. */
    private static Map<String, String> storageAfterAllMigrations() throws IOException {
        Map<String, String> params = new HashMap<>();
        List<Path> files;
        try (Stream<Path> s = Files.list(MIGRATIONS)) {
            files = s.filter(p -> p.getFileName().toString().matches("V\\d+__.*\\.sql"))
                    .sorted(Comparator.comparingInt(p -> Integer.parseInt(p.getFileName().toString().replaceAll("^V(\\d+)__.*", "$1")))).toList();
        }
        assertThat(files).isNotEmpty();
        for (Path f : files) {
            String sql = Files.readString(f).replaceAll("--[^\n]*", "");
            Matcher m = ALTER.matcher(sql);
            while (m.find()) {
                for (String kv : m.group(1).split(",")) {
                    String[] p = kv.split("=");
                    params.put(p[0].strip().toLowerCase(), p[1].strip());
                }
            }
        }
        return params;
    }
}
