package io.queen.timers.core.db;

import java.sql.SQLException;
import java.util.Set;

/**
 * The one SQLSTATE classifier (docs/decisions.md#failures-back-off-and-stay-isolated).
 * <ul>
 *   <li>Deployment: 42883 undefined function, 42P01 undefined table, 42703 undefined column, 42501
 *       insufficient privilege. Every row would fail the same way: the schema or the grants are wrong.</li>
 *   <li>Transient: 40001 serialization failure, 40P01 deadlock, 55P03 lock not available (lock_timeout),
 *       25P03 idle-in-transaction timeout, class 08 connection exception, 53 insufficient resources, 57
 *       operator intervention (admin shutdown, query canceled by statement_timeout, terminated backend), 58
 *       system error, and an error with no SQLSTATE at all (the driver lost the socket, or its socket timeout
 *       gave up on a backend that stopped answering).</li>
 *   <li>Everything else is permanent.</li>
 * </ul>
 */
public final class SqlStates {

    private static final Set<String> DEPLOYMENT = Set.of("42883", "42P01", "42703", "42501");
    private static final Set<String> TRANSIENT = Set.of("40001", "40P01", "55P03", "25P03");

    private SqlStates() {}

    public static ErrorClass classify(Throwable error) {
        SQLException sql = find(error);
        if (sql == null) {
            return ErrorClass.TRANSIENT;
        }
        String state = sql.getSQLState();
        if (state == null || state.length() < 2) {
            return ErrorClass.TRANSIENT;
        }
        if (DEPLOYMENT.contains(state)) {
            return ErrorClass.DEPLOYMENT;
        }
        if (TRANSIENT.contains(state)) {
            return ErrorClass.TRANSIENT;
        }
        return switch (state.substring(0, 2)) {
            case "08", "53", "57", "58" -> ErrorClass.TRANSIENT;
            default -> ErrorClass.PERMANENT;
        };
    }

    /**
     * Whether {@code error} was caused by the values of the work that met it rather than by the world:
     * a data exception (SQLSTATE class 22: out-of-range values, bad encodings, NUL in text), an integrity
     * violation (23) or a program limit (54: a value too large, a statement too complex), or any error
     * that is not a database error at all (a bug met by these values). Everything else, including every
     * {@link ErrorClass#TRANSIENT} outage (08, 53, 57, 58, 40001, 40P01), a lock or statement timeout and a
     * schema error, is the world's: the work waits and is retried, never judged.
     */
    public static boolean causedByValues(Throwable error) {
        SQLException sql = find(error);
        if (sql == null) {
            return true;
        }
        String state = sql.getSQLState();
        return state != null && (state.startsWith("22") || state.startsWith("23") || state.startsWith("54"));
    }

    /**
     * Whether {@code error} is a wait that ran out: a lock timeout (55P03, lock_timeout) or a statement
     * timeout (57014, statement_timeout). Transient; it also says the work waited on something held
     * elsewhere, which a caller can route around (the sweeper fires a claim's other destinations).
     */
    public static boolean waitedOut(Throwable error) {
        SQLException sql = find(error);
        return sql != null && ("55P03".equals(sql.getSQLState()) || "57014".equals(sql.getSQLState()));
    }

    /** The first SQLException in the cause chain, or null. */
    public static SQLException find(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof SQLException e) {
                return e;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }

    /**
     * The {@link Error} in the cause chain, or null. pgjdbc turns an OutOfMemoryError met while reading a
     * result into an SQLException with SQLSTATE 53200 (a "transient" class): a loop must treat it as the
     * Error it is, or it retries the same allocation forever while the process looks alive.
     */
    public static Error fatalCause(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof Error e) {
                return e;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }
}
