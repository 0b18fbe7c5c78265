package io.queen.timers.sql;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.flywaydb.core.api.MigrationVersion;

/**
 * The versioned migrations this build ships (db/migration/V&lt;version&gt;__*.sql beside this class, in its
 * directory or its jar), read once without a database: what the schema must have applied to be current, and the
 * file each version is.
 */
final class ShippedMigrations {

    private static final String FOLDER = "db/migration/";
    private static final Pattern NAME = Pattern.compile("V([0-9][0-9._]*)__[^/]*\\.sql");
    private static volatile Map<MigrationVersion, String> scripts;

    private ShippedMigrations() {}

    static List<MigrationVersion> versions() {
        return List.copyOf(scripts().keySet());
    }

    /** Version -> file name (V001__queen_log.sql), in version order. */
    static Map<MigrationVersion, String> scripts() {
        Map<MigrationVersion, String> s = scripts;
        if (s == null) {
            s = Collections.unmodifiableMap(scan());
            scripts = s;
        }
        return s;
    }

    private static Map<MigrationVersion, String> scan() {
        Map<MigrationVersion, String> found = new TreeMap<>();
        try {
            Path source = Path.of(ShippedMigrations.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (Files.isDirectory(source)) {
                try (Stream<Path> files = Files.list(source.resolve(FOLDER))) {
                    files.forEach(f -> add(f.getFileName().toString(), found));
                }
            } else {
                try (ZipFile jar = new ZipFile(source.toFile())) {
                    for (Enumeration<? extends ZipEntry> e = jar.entries(); e.hasMoreElements(); ) {
                        String name = e.nextElement().getName();
                        if (name.startsWith(FOLDER)) {
                            add(name.substring(FOLDER.length()), found);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the shipped migrations", e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException("cannot list the shipped migrations", e);
        }
        if (found.isEmpty()) {
            throw new IllegalStateException("no migrations found under " + FOLDER + " beside " + ShippedMigrations.class.getName());
        }
        return found;
    }

    private static void add(String fileName, Map<MigrationVersion, String> found) {
        Matcher m = NAME.matcher(fileName);
        if (m.matches()) {
            found.put(MigrationVersion.fromVersion(m.group(1).replace('_', '.')), fileName);
        }
    }
}
