package io.queen.timers.stack;

import io.queen.timers.embedded.EmbeddedPostgresServer;
import io.queen.timers.embedded.SharedPostgres;
import java.nio.file.Path;

/**
 * Where a {@link Stack}'s PostgreSQL comes from: a server of its own (embedded, zonky's binaries), or a database that is
 * already there. Either way the stack connects as the schema's owner to migrate, make the services' logins and read.
 */
public interface Postgres {

    /** An embedded server in a temporary directory on any free port, fsync off, removed when the stack stops. */
    static Postgres embedded() {
        return new Embedded(null, 0);
    }

    /**
     * An embedded server keeping its data in {@code dataDir} (durable: fsync on, kept between runs), or a temporary one
     * when {@code dataDir} is null; on {@code port}, 0 for any free one.
     */
    static Postgres embedded(Path dataDir, int port) {
        return new Embedded(dataDir, port);
    }

    /**
     * A database that is already running: {@code user} migrates the schema and owns it
     * (docs/schema-and-roles.md#database-roles), and needs CREATEROLE for the services' logins.
     */
    static Postgres external(String jdbcUrl, String user, String password) {
        return new External(jdbcUrl, user, password == null ? "" : password);
    }

    /**
     * A database of its own on this JVM's shared test server ({@link SharedPostgres}: {@code QUEEN_TEST_JDBC_URL}, else
     * one embedded server for the whole JVM), named after {@code owner} (a test class), dropped when the stack stops. The
     * server's user owns it and makes the logins.
     */
    static Postgres freshDatabase(String owner) {
        return new Fresh(owner);
    }

    /** Starts (or, for an external one, names) the database. */
    Running start();

    record Fresh(String owner) implements Postgres {
        @Override
        public Running start() {
            SharedPostgres.Database db = SharedPostgres.createDatabase(owner);
            return new Running(db.jdbcUrl(), db.server().user(), db.server().password(), db::drop);
        }
    }

    record Embedded(Path dataDir, int port) implements Postgres {
        @Override
        public Running start() {
            EmbeddedPostgresServer server = EmbeddedPostgresServer.start(dataDir, port, dataDir == null
                    ? EmbeddedPostgresServer.Durability.RELAXED : EmbeddedPostgresServer.Durability.DURABLE, false);
            return new Running(server.jdbcUrl("postgres"), EmbeddedPostgresServer.USER, "", server);
        }
    }

    record External(String jdbcUrl, String user, String password) implements Postgres {
        @Override
        public Running start() {
            return new Running(jdbcUrl, user, password, null);
        }
    }

    /** The database a stack uses, as its owner; {@link #close()} stops the server when the stack started one. */
    record Running(String jdbcUrl, String user, String password, AutoCloseable server) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            if (server != null) {
                server.close();
            }
        }
    }
}
