package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.PostgresDatabase;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 47, point 3 (V135; docs/schema-and-roles.md#database-roles): `queen-timers migrate`, run by the schema owner with
 * bridge.login, binds the bridge group its settings declare to that login, and its command topics to their tenants, read
 * as the bridge reads them; a least-privilege bridge login can then change that group alone, with those topics alone.
 */
class MigrateBridgeGroupIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.empty();

    /** The group and exactly the declared topics, again at every migrate; a declaration the bridge would refuse binds nothing. */
    @Test
    void migrateBindsTheBridgeGroupItsSettingsDeclareToTheBridgesLogin() throws Exception {
        String a = "00000000-0000-0000-0000-00000000000a";
        String b = "00000000-0000-0000-0000-00000000000b";
        Map<String, String> env = Map.of("QUEEN_JDBC_USER", db.user(), "QUEEN_JDBC_PASSWORD", db.password(),
                "QUEEN_BRIDGE_LOGIN", "timers_bridge", "QUEEN_BRIDGE_GROUP_ID", "declared-group",
                "QUEEN_COMMAND_TOPICS", "cmds-a,cmds-b", "QUEEN_COMMAND_TOPIC_TENANTS", "cmds-a=" + a + ",cmds-b=" + b);
        Cli r = Cli.run(env, "migrate", "--jdbc-url", db.jdbcUrl());
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("bridge group declared-group bound to login timers_bridge");
        assertThat(rows("SELECT login || ' ' || bound_by FROM queen.bridge_groups WHERE group_id = 'declared-group'"))
                .containsExactly("timers_bridge owner");
        assertThat(rows("SELECT topic || ' ' || tenant_id || ' ' || bound_by FROM queen.bridge_topics WHERE group_id = 'declared-group' ORDER BY topic"))
                .containsExactly("cmds-a " + a + " owner", "cmds-b " + b + " owner");

        // declared again without topic b, the login given as a flag: exactly what is declared now
        Map<String, String> fewer = new java.util.HashMap<>(env);
        fewer.put("QUEEN_COMMAND_TOPICS", "cmds-a");
        fewer.put("QUEEN_COMMAND_TOPIC_TENANTS", "cmds-a=" + a);
        fewer.remove("QUEEN_BRIDGE_LOGIN");
        Cli again = Cli.run(fewer, "migrate", "--jdbc-url", db.jdbcUrl(), "--bridge-login", "timers_bridge_2");
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(rows("SELECT login FROM queen.bridge_groups WHERE group_id = 'declared-group'")).containsExactly("timers_bridge_2");
        assertThat(rows("SELECT topic FROM queen.bridge_topics WHERE group_id = 'declared-group'")).containsExactly("cmds-a");

        // a topic that names no tenant among several is the bridge's start-up error, and migrate's: one line, nothing bound
        Map<String, String> unnamed = new java.util.HashMap<>(env);
        unnamed.put("QUEEN_BRIDGE_GROUP_ID", "unnamed-group");
        unnamed.put("QUEEN_COMMAND_TOPIC_TENANTS", "cmds-a=" + a);
        Cli refused = Cli.run(unnamed, "migrate", "--jdbc-url", db.jdbcUrl());
        assertThat(refused.exitCode()).isEqualTo(1);
        assertThat(refused.err()).contains("command topic cmds-b names no tenant");
        assertThat(refused.err().lines()).hasSize(1);
        assertThat(rows("SELECT group_id FROM queen.bridge_groups WHERE group_id = 'unnamed-group'")).isEmpty();
    }

    /** The bridge's own properties file (as the fault harness passes it): its topic.<name>.tenant keys, the owner's login as a flag. */
    @Test
    void migrateReadsTheBridgesPropertiesFileWithTheOwnersLoginOnTop(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        String a = "00000000-0000-0000-0000-00000000000a";
        String b = "00000000-0000-0000-0000-00000000000b";
        java.nio.file.Path file = dir.resolve("bridge.properties");
        java.util.Properties p = new java.util.Properties();
        p.put("jdbc.url", db.jdbcUrl());
        p.put("jdbc.user", "file_bridge");   // the bridge's login: --jdbc-user (the owner) wins for the connection
        p.put("kafka.bootstrap.servers", "127.0.0.1:1");
        p.put("bridge.group.id", "file-group");
        p.put("command.topics", "file-a,file-b");
        p.put("topic.file-a.tenant", a);
        p.put("topic.file-b.tenant", b);
        p.put("topic.file-b.producer.sub", "svc-b");
        try (var out = java.nio.file.Files.newBufferedWriter(file)) {
            p.store(out, null);
        }
        Cli r = Cli.run(Map.of("QUEEN_JDBC_PASSWORD", db.password()), "migrate", "--config", file.toString(), "--jdbc-user", db.user(),
                "--bridge-login", "file_bridge");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(rows("SELECT login FROM queen.bridge_groups WHERE group_id = 'file-group'")).containsExactly("file_bridge");
        assertThat(rows("SELECT topic || ' ' || tenant_id FROM queen.bridge_topics WHERE group_id = 'file-group' ORDER BY topic"))
                .containsExactly("file-a " + a, "file-b " + b);
    }

    private static java.util.List<String> rows(String sql) throws java.sql.SQLException {
        java.util.List<String> out = new java.util.ArrayList<>();
        try (var c = db.dataSource().getConnection(); var st = c.createStatement(); var rs = st.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }
}
