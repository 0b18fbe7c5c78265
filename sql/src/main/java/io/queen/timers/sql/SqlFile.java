package io.queen.timers.sql;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Loads a statement from a {@code .sql} resource beside the class that runs it, once, into a
 * constant. Statements carry only {@code ?} placeholders; values are always bound, never spliced.
 */
public final class SqlFile {

    private SqlFile() {}

    /** The text of {@code name} in {@code owner}'s package, for example {@code "push.sql"}. */
    public static String load(Class<?> owner, String name) {
        try (InputStream in = owner.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing SQL resource " + name + " beside " + owner.getName());
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read SQL resource " + name + " beside " + owner.getName(), e);
        }
    }
}
