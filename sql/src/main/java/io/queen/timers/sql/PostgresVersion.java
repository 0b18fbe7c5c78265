package io.queen.timers.sql;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PostgreSQL versions queen-timers runs on (docs/operations.md#compatibility): majors {@value #OLDEST_MAJOR} to
 * {@value #NEWEST_TESTED_MAJOR}, each proven end to end by CompatibilityMatrixIT (module e2e). Checked before the
 * schema is migrated and at every service's start, so an older server is refused with one sentence naming the
 * versions, not with a syntax error from the middle of a migration. A newer major than the matrix covers is allowed,
 * with a warning: PostgreSQL keeps SQL compatibility across majors far better than it breaks it, and refusing
 * would make every PostgreSQL release a queen-timers release. PRICE: one {@code SHOW}-sized read per check.
 */
public final class PostgresVersion {

    /** The oldest major supported: the oldest the compatibility matrix runs. */
    public static final int OLDEST_MAJOR = 14;
    /** The newest major the compatibility matrix runs. */
    public static final int NEWEST_TESTED_MAJOR = 17;

    private static final Logger LOG = LoggerFactory.getLogger(PostgresVersion.class);

    private PostgresVersion() {}

    /** The major of a {@code server_version_num} (since PostgreSQL 10: major * 10000 + minor). */
    static int major(int serverVersionNum) {
        return serverVersionNum / 10_000;
    }

    /**
     * Why a server of {@code serverVersionNum} ({@code server_version} reads {@code version}) is refused, or empty when
     * it is supported.
     */
    static Optional<String> refusal(int serverVersionNum, String version) {
        if (major(serverVersionNum) >= OLDEST_MAJOR) {
            return Optional.empty();
        }
        return Optional.of("PostgreSQL " + version + " is not supported: queen-timers needs PostgreSQL " + OLDEST_MAJOR
                + " or newer (tested on " + OLDEST_MAJOR + " to " + NEWEST_TESTED_MAJOR + ", docs/operations.md#compatibility);"
                + " upgrade the server");
    }

    /**
     * Throws {@link Unsupported} when the server of {@code c} is older than {@value #OLDEST_MAJOR}; logs a warning
     * when it is newer than {@value #NEWEST_TESTED_MAJOR}. Returns the server's major.
     */
    public static int require(Connection c) throws SQLException {
        int num;
        String version;
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS version")) {
            rs.next();
            num = rs.getInt("num");
            version = rs.getString("version");
        }
        Optional<String> refused = refusal(num, version);
        if (refused.isPresent()) {
            throw new Unsupported(refused.get());
        }
        if (major(num) > NEWEST_TESTED_MAJOR) {
            LOG.warn("PostgreSQL {} is newer than the newest major the compatibility matrix tests ({}): expected to work, not proven"
                    + " (docs/operations.md#compatibility)", version, NEWEST_TESTED_MAJOR);
        }
        return major(num);
    }

    /** A server older than the oldest supported major: permanent, never retried. */
    public static final class Unsupported extends IllegalStateException {
        Unsupported(String message) {
            super(message);
        }
    }
}
