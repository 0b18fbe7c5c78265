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

class OffsetsCommandIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @Test
    void offsetsSetMovesOneStoredOffsetAndWritesItsReasonAsAnAuditEvent() throws Exception {
        Map<String, String> env = Map.of("QUEEN_JDBC_URL", db.jdbcUrl(), "QUEEN_JDBC_USER", db.user(), "QUEEN_JDBC_PASSWORD", db.password(),
                "QUEEN_BRIDGE_GROUP_ID", "g-ops");
        Cli first = Cli.run(env, "offsets", "set", "--topic", "cmds", "--partition", "2", "--offset", "40", "--reason", "new group starts late",
                "--tenant", DEFAULT_TENANT);
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out()).isEqualTo("group g-ops: cmds/2 moved from (none stored) to 40; audit event offset_moved written for tenant "
                + DEFAULT_TENANT + "\n");
        Cli second = Cli.run(env, "offsets", "set", "--topic", "cmds", "--partition", "2", "--offset", "55", "--reason", "retention", "--json",
                "--tenant", DEFAULT_TENANT);
        assertThat(second.exitCode()).as(second.err()).isZero();
        assertThat(second.out()).contains("\"from\":40", "\"to\":55", "\"reason\":\"retention\"");
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT next_offset FROM queen.bridge_offsets WHERE group_id = 'g-ops' AND topic = 'cmds' AND partition = 2")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getLong(1)).isEqualTo(55);
        }
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT kafka_key, event->>'reason', event->>'from', event->>'to', event->>'by' FROM queen.timer_audit_outbox"
                        + " WHERE type = 'offset_moved' AND event->>'topic' = 'cmds' ORDER BY id")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("cmds/2");
            assertThat(rs.getString(2)).isEqualTo("new group starts late");
            assertThat(rs.getString(3)).isNull();
            assertThat(rs.getString(4)).isEqualTo("40");
            assertThat(rs.getString(5)).startsWith(db.user() + "@"); // the database's session user, not the client's claim
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(3)).isEqualTo("40");
        }
    }

    static final String DEFAULT_TENANT = "00000000-0000-0000-0000-000000000001";
    static final String TENANT_B = "0000000b-0000-0000-0000-00000000000b";

    /**
     * Issue 24, point 5: a live partition (a stored offset exists) is not moved backwards unless --replay, and the message
     * names the range and what replaying re-fires; the actor is the database's (session_user, client address); the event goes
     * to the tenant that owns the topic, which a bridge of the group registered.
     */
    @Test
    void aLivePartitionMovesBackOnlyWithReplayAndTheEventGoesToTheTopicsTenantWithTheDatabasesActor() throws Exception {
        Map<String, String> env = Map.of("QUEEN_JDBC_URL", db.jdbcUrl(), "QUEEN_JDBC_USER", db.user(), "QUEEN_JDBC_PASSWORD", db.password(),
                "QUEEN_BRIDGE_GROUP_ID", "g-back");
        execute("SELECT queen.bridge_topics_register_v1('g-back', ARRAY['cmds-b'], ARRAY['" + TENANT_B + "'::uuid])");
        Cli set = Cli.run(env, "offsets", "set", "--topic", "cmds-b", "--partition", "0", "--offset", "100", "--reason", "start");
        assertThat(set.exitCode()).as(set.err()).isZero();
        assertThat(set.out()).endsWith("for tenant " + TENANT_B + "\n");

        Cli back = Cli.run(env, "offsets", "set", "--topic", "cmds-b", "--partition", "0", "--offset", "60", "--reason", "oops");
        assertThat(back.exitCode()).isEqualTo(1);
        assertThat(back.err()).contains("refused", "[60, 100)", "up to 40 records", "fires a second time", "--replay");
        assertThat(storedOffset("g-back", "cmds-b", 0)).isEqualTo(100);

        Cli wrongTenant = Cli.run(env, "offsets", "set", "--topic", "cmds-b", "--partition", "0", "--offset", "120", "--reason", "x",
                "--tenant", DEFAULT_TENANT);
        assertThat(wrongTenant.exitCode()).isEqualTo(1);
        assertThat(wrongTenant.err()).contains("belongs to tenant " + TENANT_B);
        Cli unregistered = Cli.run(env, "offsets", "set", "--topic", "nobody", "--partition", "0", "--offset", "1", "--reason", "x");
        assertThat(unregistered.exitCode()).isEqualTo(1);
        assertThat(unregistered.err()).contains("not registered", "--tenant");

        Cli replay = Cli.run(env, "offsets", "set", "--topic", "cmds-b", "--partition", "0", "--offset", "60", "--reason", "replay on purpose",
                "--replay");
        assertThat(replay.exitCode()).as(replay.err()).isZero();
        assertThat(replay.out()).contains("moved from 100 to 60 (replaying 40 offsets)");
        assertThat(storedOffset("g-back", "cmds-b", 0)).isEqualTo(60);

        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT tenant_id, event->>'from', event->>'to', event->>'replay', event->>'by', event->>'clientLabel'"
                        + " FROM queen.timer_audit_outbox WHERE type = 'offset_moved' AND event->>'topic' = 'cmds-b' ORDER BY id")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo(TENANT_B);
            assertThat(rs.getString(2)).isNull();
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo(TENANT_B);
            assertThat(rs.getString(2)).isEqualTo("100");
            assertThat(rs.getString(3)).isEqualTo("60");
            assertThat(rs.getString(4)).isEqualTo("true");
            // server-side: the session user and the client's address (the tests reach PostgreSQL over TCP), never the client's word
            assertThat(rs.getString(5)).matches(java.util.regex.Pattern.quote(db.user()) + "@[0-9a-f.:]+");
            assertThat(rs.getString(6)).contains("(queen-timers offsets set)");
            assertThat(rs.next()).as("the refused moves wrote nothing").isFalse();
        }
    }

    private static void execute(String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static long storedOffset(String group, String topic, int partition) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT next_offset FROM queen.bridge_offsets WHERE group_id = '" + group + "' AND topic = '"
                        + topic + "' AND partition = " + partition)) {
            assertThat(rs.next()).isTrue();
            return rs.getLong(1);
        }
    }

    /** Issue 27, point 4: offsets get shows what the bridge stored beside the broker's log, and the lag between them. */
    @Test
    void offsetsGetShowsTheStoredOffsetsBesideTheBrokersLogEnd() throws Exception {
        String topic = io.queen.timers.testkit.TestKafka.newTopic("offsets-get", 2);
        var props = new java.util.HashMap<>(io.queen.timers.testkit.TestKafka.producerProps());
        props.put("key.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class.getName());
        props.put("value.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class.getName());
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(props)) {
            for (int i = 0; i < 5; i++) {
                producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 1, null, new byte[] {(byte) i})).get();
            }
        }
        Map<String, String> env = Map.of("QUEEN_JDBC_URL", db.jdbcUrl(), "QUEEN_JDBC_USER", db.user(), "QUEEN_JDBC_PASSWORD", db.password(),
                "QUEEN_BRIDGE_GROUP_ID", "g-get", "QUEEN_KAFKA_BOOTSTRAP", io.queen.timers.testkit.TestKafka.bootstrapServers());
        Cli set = Cli.run(env, "offsets", "set", "--topic", topic, "--partition", "1", "--offset", "2", "--reason", "test", "--tenant", DEFAULT_TENANT);
        assertThat(set.exitCode()).as(set.err()).isZero();
        execute("INSERT INTO queen.bridge_offsets (group_id, topic, \"partition\", next_offset) VALUES ('g-other', '" + topic + "', 0, 9)");

        Cli get = Cli.run(env, "offsets", "get", "--group", "g-get", "--json");
        assertThat(get.exitCode()).as(get.err()).isZero();
        assertThat(get.out().lines().toList()).hasSize(1);
        var row = Output.mapper().readTree(get.out());
        assertThat(row.get("topic").asText()).isEqualTo(topic);
        assertThat(row.get("partition").asInt()).isEqualTo(1);
        assertThat(row.get("stored").asLong()).isEqualTo(2);
        assertThat(row.get("logEnd").asLong()).isEqualTo(5);
        assertThat(row.get("lag").asLong()).isEqualTo(3);
        assertThat(row.get("inRange").asBoolean()).isTrue();

        Cli all = Cli.run(env, "offsets", "get", "--topic", topic);
        assertThat(all.exitCode()).as(all.err()).isZero();
        assertThat(all.out()).contains("group g-get  " + topic + "/1  stored 2  log [0, 5)  lag 3",
                "group g-other  " + topic + "/0  stored 9  log [0, 0)  lag -9  OUT OF RANGE");
        Cli dbOnly = Cli.run(env, "offsets", "get", "--group", "g-get", "--no-kafka");
        assertThat(dbOnly.out()).startsWith("group g-get  " + topic + "/1  stored 2  updated ");
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
