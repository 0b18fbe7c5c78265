package io.queen.timers.testkit;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * PostgreSQL backends of one application, found in pg_stat_activity by application_name, and stopped with
 * SIGSTOP / resumed with SIGCONT: a backend that stops answering without closing its socket, the way a
 * frozen host or a black-holed network looks to a client. Works on the embedded server (same host, same
 * user); the processes are this machine's.
 */
public final class Backends {

    private Backends() {}

    /** Process ids of this database's backends whose application_name is {@code applicationName}. */
    public static List<Integer> pids(DataSource admin, String applicationName) {
        String sql = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ? ORDER BY pid";
        try (Connection c = admin.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.setString(1, applicationName);
            List<Integer> out = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getInt(1));
                }
            }
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** kill -STOP each. */
    public static void stop(List<Integer> pids) {
        signal("-STOP", pids);
    }

    /** kill -CONT each (a pid that is gone meanwhile is ignored). */
    public static void resume(List<Integer> pids) {
        signal("-CONT", pids);
    }

    private static void signal(String signal, List<Integer> pids) {
        for (int pid : pids) {
            try {
                Process p = new ProcessBuilder("kill", signal, Integer.toString(pid)).inheritIO().start();
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new IllegalStateException("kill " + signal + " " + pid + " did not return");
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot run kill " + signal + " " + pid, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
