package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class OffsetsCommandTest {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @Test
    void offsetsSetMovesOneStoredOffsetAndWritesItsReasonAsAnAuditEvent() throws Exception {
        Map<String, String> env = Map.of("QUEEN_JDBC_URL", db.jdbcUrl(), "QUEEN_JDBC_USER", db.user(), "QUEEN_JDBC_PASSWORD", db.password(),
                "QUEEN_BRIDGE_GROUP_ID", "g-ops");
        Cli first = Cli.run(env, "offsets", "set", "--topic", "cmds", "--partition", "2", "--offset", "40", "--reason", "new group starts late");
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out()).isEqualTo("group g-ops: cmds/2 moved from (none stored) to 40; audit event offset_moved written\n");
        Cli second = Cli.run(env, "offsets", "set", "--topic", "cmds", "--partition", "2", "--offset", "55", "--reason", "retention", "--json");
        assertThat(second.exitCode()).as(second.err()).isZero();
        assertThat(second.out()).contains("\"from\":40", "\"to\":55", "\"reason\":\"retention\"");
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT next_offset FROM queen.bridge_offsets WHERE group_id = 'g-ops' AND topic = 'cmds' AND partition = 2")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getLong(1)).isEqualTo(55);
        }
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT kafka_key, event->>'reason', event->>'from', event->>'to', event->>'by' FROM queen.timer_audit_outbox"
                        + " WHERE type = 'offset_moved' ORDER BY id")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("cmds/2");
            assertThat(rs.getString(2)).isEqualTo("new group starts late");
            assertThat(rs.getString(3)).isNull();
            assertThat(rs.getString(4)).isEqualTo("40");
            assertThat(rs.getString(5)).contains("queen-timers offsets set");
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(3)).isEqualTo("40");
        }
    }

    @Test
    void withoutAReasonNothingMoves() {
        Cli r = Cli.run(Map.of("QUEEN_JDBC_URL", db.jdbcUrl()), "offsets", "set", "--topic", "cmds", "--partition", "0", "--offset", "1");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--reason");
        Cli blank = Cli.run(Map.of("QUEEN_JDBC_URL", db.jdbcUrl()), "offsets", "set", "--topic", "cmds", "--partition", "0", "--offset", "1", "--reason", " ");
        assertThat(blank.exitCode()).isEqualTo(1);
        assertThat(blank.err()).startsWith("error: --reason must say why");
    }
}
