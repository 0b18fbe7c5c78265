package io.queen.timers.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.db.DatabaseRole;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.core.ops.ServiceKind;
import io.queen.timers.embedded.SharedPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The stack on the JVM's shared servers: a service starts from its stack's settings as a login of its role and nothing
 * more, the owner's declaration for that login runs first, and a stopped stack leaves neither its database nor its
 * logins behind on the shared server.
 */
class StackIT {

    /** What the fake service saw: who it connected as, and whether the owner had declared it before. */
    record Seen(String user, boolean superuser, boolean memberOfItsRole, boolean declaredFirst) implements AutoCloseable {
        @Override
        public void close() {}
    }

    private static final List<String> DECLARED = new ArrayList<>();

    /** A service of the sweeper's role that connects with the settings it is given and reports what it is. */
    private static final ServiceKind<Seen> PROBE = new ServiceKind<>("probe", DatabaseRole.SWEEPER, CommonSettings::definition,
            StackIT::connect, settings -> {
                throw new UnsupportedOperationException("not hosted");
            }, (settings, owner, login) -> DECLARED.add(login));

    private static Seen connect(Config c, Dependencies deps) {
        try (Connection conn = DriverManager.getConnection(c.string(CommonSettings.JDBC_URL), c.string(CommonSettings.JDBC_USER),
                c.string(CommonSettings.JDBC_PASSWORD)); Statement st = conn.createStatement();
                ResultSet rs = st.executeQuery("SELECT current_user, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user),"
                        + " pg_has_role(current_user, '" + DatabaseRole.SWEEPER + "', 'MEMBER')")) {
            rs.next();
            return new Seen(rs.getString(1), rs.getBoolean(2), rs.getBoolean(3), DECLARED.contains(rs.getString(1)));
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aServiceRunsAsALoginOfItsRoleDeclaredByTheOwnerFirst() {
        try (Stack stack = Stack.shared("StackIT")) {
            Seen seen = stack.start(PROBE, (s, st) -> {}, null);
            assertThat(seen.user()).isEqualTo(stack.login(DatabaseRole.SWEEPER).name()).startsWith("queen_test_sweeper_");
            assertThat(seen.superuser()).isFalse();
            assertThat(seen.memberOfItsRole()).isTrue();
            assertThat(seen.declaredFirst()).isTrue();
            assertThat(stack.config(PROBE).bool(CommonSettings.DB_ROLE_CHECK)).as("the role check ships on").isTrue();
        }
    }

    @Test
    void aStoppedStackLeavesNoDatabaseAndNoLoginOnTheSharedServer() throws SQLException {
        String database;
        String login;
        try (Stack stack = Stack.shared("StackIT")) {
            login = stack.login(DatabaseRole.BRIDGE).name();
            try (Connection c = stack.owner().getConnection(); Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT current_database()")) {
                rs.next();
                database = rs.getString(1);
            }
            assertThat(count("SELECT count(*) FROM pg_database WHERE datname = '" + database + "'")).isEqualTo(1);
            assertThat(count("SELECT count(*) FROM pg_roles WHERE rolname = '" + login + "'")).isEqualTo(1);
        }
        assertThat(count("SELECT count(*) FROM pg_database WHERE datname = '" + database + "'")).isZero();
        assertThat(count("SELECT count(*) FROM pg_roles WHERE rolname = '" + login + "'")).isZero();
    }

    @Test
    void aSettingOfTheWrongTypeIsRefusedBeforeAnythingStarts() {
        try (Stack stack = Stack.shared("StackIT")) {
            assertThatThrownBy(() -> stack.start(PROBE, (s, st) -> s.set(CommonSettings.JDBC_POOL_SIZE, "4"), null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(CommonSettings.JDBC_POOL_SIZE);
        }
    }

    private static long count(String sql) throws SQLException {
        SharedPostgres.Server s = SharedPostgres.server();
        try (Connection c = DriverManager.getConnection(s.jdbcUrl(s.adminDatabase()), s.user(), s.password());
                Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
