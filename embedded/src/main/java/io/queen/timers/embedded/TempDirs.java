package io.queen.timers.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Best-effort removal of a directory tree the embedded servers created. */
final class TempDirs {
    private TempDirs() {}

    static void delete(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // a file still held open by a dying server; the OS temp cleaner takes it later
                }
            });
        } catch (IOException ignored) {
            // as above
        }
    }
}
