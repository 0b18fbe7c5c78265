package io.queen.timers.core.db;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Loads a statement from a {@code .sql} resource beside the class that runs it, once, at
 * construction of that class. SQL is never assembled from strings with values in them: values are
 * bind parameters, and the text a reviewer reads is the text PostgreSQL runs.
 */
public final class SqlFiles {

    private SqlFiles() {}

    /** The text of resource {@code name} (for example "fetch.sql") in {@code owner}'s package. */
    public static String load(Class<?> owner, String name) {
        try (InputStream in = owner.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("SQL resource " + name + " not found beside " + owner.getName());
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read SQL resource " + name, e);
        }
    }
}
