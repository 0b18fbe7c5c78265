package io.queen.timers.core.db;

import java.sql.SQLException;

/**
 * The one SQLSTATE classifier (docs/decisions.md#failures-back-off-and-stay-isolated). Transient: 40001
 * serialization failure, 40P01
 * deadlock, class 08 connection exception, 53 insufficient resources, 57 operator intervention
 * (admin shutdown, query canceled, terminated backend), 58 system error, and an error with no
 * SQLSTATE at all (the driver lost the socket). Everything else is permanent.
 */
public final class SqlStates {

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
        if (state.equals("40001") || state.equals("40P01")) {
            return ErrorClass.TRANSIENT;
        }
        return switch (state.substring(0, 2)) {
            case "08", "53", "57", "58" -> ErrorClass.TRANSIENT;
            default -> ErrorClass.PERMANENT;
        };
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
}
