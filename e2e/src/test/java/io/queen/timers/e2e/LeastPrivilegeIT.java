package io.queen.timers.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.audit.EventType;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.db.DatabaseRole;
import io.queen.timers.sql.BridgeGroups;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import io.queen.timers.sweeper.Sweepers;
import io.queen.timers.testkit.AuditTopicReader;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 24, point 6 (docs/schema-and-roles.md#database-roles): the services run as least-privilege roles. Connected as
 * them, the bridge and the sweeper schedule, fire and publish the audit end to end, while the same
 * connections cannot write a table directly (42501), nor call another role's functions; and a service
 * started as a role that could (the superuser, a role with a stray table grant, the wrong group) refuses
 * to start, naming the fix.
 */
class LeastPrivilegeIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String PASSWORD = "least-privilege-pw";
    static final UUID DEFAULT_TENANT = UUID.fromString(CommonSettings.DEFAULT_TENANT);
    static String bridgeLogin;
    static String sweeperLogin;
    static String strayLogin;

    @BeforeAll
    static void logins() throws Exception {
        String suffix = Long.toHexString(System.nanoTime());
        bridgeLogin = "lp_bridge_" + suffix;
        sweeperLogin = "lp_sweeper_" + suffix;
        strayLogin = "lp_stray_" + suffix;
        // what a DBA does (docs/schema-and-roles.md#database-roles): a login that is a member of the group role, nothing more
        admin("CREATE ROLE " + bridgeLogin + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.BRIDGE);
        admin("CREATE ROLE " + sweeperLogin + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.SWEEPER);
        admin("CREATE ROLE " + strayLogin + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.BRIDGE);
        admin("GRANT UPDATE ON queen.bridge_offsets TO " + strayLogin); // one stray grant
    }

    @AfterAll
    static void dropLogins() throws Exception {
        admin("REVOKE ALL ON queen.bridge_offsets FROM " + strayLogin);
        for (String login : List.of(bridgeLogin, sweeperLogin, strayLogin)) {
            admin("DROP ROLE IF EXISTS " + login);
        }
    }

    @Test
    void asTheirRolesTheServicesWorkEndToEndAndCannotWriteATableDirectly() throws Exception {
        String topic = TestKafka.newTopic("lp-cmd", 1);
        String audit = TestKafka.newTopic("lp-audit", 1);
        Map<String, String> bridgeSettings = bridgeSettings(topic, audit, bridgeLogin);
        // the owner binds the group to the bridge's login with its topic's tenant, as `migrate` does with the bridge's declaration
        BridgeGroups.bind(db.dataSource(), bridgeSettings.get("bridge.group.id"), bridgeLogin, Map.of(topic, DEFAULT_TENANT));
        try (BridgeMain bridge = BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridgeSettings)), Dependencies.defaults(new SimpleMeterRegistry()));
                SweeperMain sweeper = Sweepers.start(db, Map.of(CommonSettings.JDBC_USER, sweeperLogin, CommonSettings.JDBC_PASSWORD, PASSWORD,
                        CommonSettings.DB_ROLE_CHECK, "true", SweeperSettings.CLEANUP_ENABLED, "true"));
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            for (int i = 0; i < 3; i++) {
                producer.send(TimerCommand.schedule("lp.q", "k" + i).delay(Duration.ZERO).txn("t" + i).payload("{\"n\":" + i + "}").envelope(topic));
            }
            producer.flush();
            List<AuditEvent> events = AuditTopicReader.awaitEvents(audit, 6, Duration.ofSeconds(120));
            assertThat(events).extracting(AuditEvent::type).containsOnly(EventType.SCHEDULED, EventType.FIRED);
            assertThat(events).filteredOn(e -> e.type() == EventType.FIRED).hasSize(3);
            // the relay, as queen_bridge, deleted what it published: through queen.timer_audit_delete_v3
            await().atMost(Duration.ofSeconds(30)).until(() -> count("SELECT count(*) FROM queen.timer_audit_outbox") == 0);
            assertThat(count("SELECT count(*) FROM queen.bridge_offsets")).isPositive();
        }

        try (Connection c = as(bridgeLogin)) {
            assertRefused(c, "UPDATE queen.bridge_offsets SET next_offset = 0");
            assertRefused(c, "DELETE FROM queen.timer_audit_outbox");
            assertRefused(c, "TRUNCATE queen.timer_audit_outbox");
            assertRefused(c, "INSERT INTO queen.bridge_offsets (group_id, topic, \"partition\", next_offset) VALUES ('g', 't', 0, 0)");
            assertRefused(c, "DELETE FROM queen.log_timers");
            // another role's function, and a helper the bridge's functions call as the owner
            assertRefused(c, "SELECT * FROM queen.timer_fire_v3('[]'::jsonb, ''::bytea, ''::bytea)");
            assertRefused(c, "SELECT * FROM queen.bridge_offset_set_v2('g', 't', 0, 0, 'why', true, NULL, 'me')");
            assertRefused(c, "SELECT queen.json_rows_v1('x', '[]'::jsonb, ARRAY['a'])");
            // what it may do: read its tables, and call its functions
            try (Statement st = c.createStatement()) {
                st.executeQuery("SELECT count(*) FROM queen.bridge_offsets").close();
                st.executeQuery("SELECT count(*) FROM queen.timer_audit_outbox").close();
            }
        }
        try (Connection c = as(sweeperLogin)) {
            assertRefused(c, "UPDATE queen.log_timers SET attempts = 0");
            assertRefused(c, "DELETE FROM queen.timer_audit_outbox");
            assertRefused(c, "UPDATE queen.bridge_offsets SET next_offset = 0");
            assertRefused(c, "SELECT count(*) FROM queen.bridge_offsets");
            assertRefused(c, "SELECT count(*) FROM queen.log_timers WHERE recurrence IS NOT NULL");
            // the recurring-series gauge counts through its function, which the role may call
            try (Statement st = c.createStatement()) {
                st.executeQuery("SELECT queen.timer_recurring_count_v1(10)").close();
            }
        }
    }

    @Test
    void aServiceRefusesToStartAsARoleThatCouldWriteTheTablesOrIsNotItsOwn() {
        String topic = TestKafka.newTopic("lp-refuse", 1);
        // the testkit's user is the server's superuser, and owns the schema
        assertThatThrownBy(() -> BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridgeSettings(topic, "lp-audit-x", db.user()))), Dependencies.defaults(new SimpleMeterRegistry())))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("as role " + db.user()).hasMessageContaining("superuser").hasMessageContaining("queen_bridge")
                .hasMessageContaining(CommonSettings.DB_ROLE_CHECK + "=false");
        assertThatThrownBy(() -> BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridgeSettings(topic, "lp-audit-x", strayLogin))), Dependencies.defaults(new SimpleMeterRegistry())))
                .isInstanceOf(ConfigException.class).hasMessageContaining("queen.bridge_offsets");
        assertThatThrownBy(() -> Sweepers.start(db, Map.of(CommonSettings.JDBC_USER, db.user(), CommonSettings.DB_ROLE_CHECK, "true")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("superuser").hasMessageContaining("queen_sweeper");
        assertThatThrownBy(() -> Sweepers.start(db, Map.of(CommonSettings.JDBC_USER, bridgeLogin, CommonSettings.JDBC_PASSWORD, PASSWORD,
                CommonSettings.DB_ROLE_CHECK, "true")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("not a member of queen_sweeper");
    }

    /**
     * Issue 37, point 5: what a function may change comes from the row, the owner's settings or a held claim, never
     * from the caller alone. Each case calls a function as the sweeper's login with arguments a hostile caller picks.
     */
    @Test
    void theSweepersFunctionsTakeNoBoundFromTheirCaller() throws Exception {
        String queue = "lp.hostile." + Long.toHexString(System.nanoTime());
        admin("INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)"
                + " VALUES ('" + queue + "', 'k', now() + interval '1 hour', 'txn-h', queen.timer_uuidv7_v1(now()), '\\x7b7d'::bytea)");
        try (Connection c = as(sweeperLogin)) {
            // dead-letter: an unclaimed pending timer and a payload of the caller's: nothing moves; with max attempts 0,
            // below the owner's min_attempts (issue 47), the call is refused outright
            String unclaimed = "'[{\"tenant_id\": \"" + DEFAULT_TENANT + "\", \"queue\": \"" + queue + "\", \"timer_key\": \"k\","
                    + " \"claim_token\": \"" + UUID.randomUUID() + "\", \"payload\": \"eyJ4IjogMX0=\"}]'::jsonb";
            try (Statement st = c.createStatement(); var rs = st.executeQuery("SELECT count(*) FROM queen.timer_dead_letter_v3(" + unclaimed + ", 5)")) {
                rs.next();
                assertThat(rs.getInt(1)).isZero();
            }
            assertInvalid(c, "SELECT count(*) FROM queen.timer_dead_letter_v3(" + unclaimed + ", 0)", "min_attempts");
            // a lease of ten years (a due timer made uncancellable): beyond queen.timer_settings.max_lease
            assertInvalid(c, "SELECT count(*) FROM queen.timer_claim_v6(10, interval '10 years', 10, 1000000, true, NULL)", "max_lease");
            // a cleanup cutoff in the future (every idle partition dead at once): later than now() - min_cleanup_idle
            assertInvalid(c, "SELECT count(*) FROM queen.log_cleanup_partitions_v1(now() + interval '1 day', 10)", "min_cleanup_idle");
            // the owner's bounds are not the login's to move
            assertRefused(c, "UPDATE queen.timer_settings SET max_lease = interval '100 years'");
        }
        assertThat(count("SELECT count(*) FROM queen.log_timers WHERE queue = '" + queue + "' AND claim_token IS NULL")).isOne();
        assertThat(count("SELECT count(*) FROM queen.timer_dlq_keys WHERE queue = '" + queue + "'")).isZero();
        admin("DELETE FROM queen.log_timers WHERE queue = '" + queue + "'");
    }

    /**
     * Issue 47, point 3: the backoffs, the attempts and the dead-letter thresholds of a failed fire are the owner's
     * (queen.timer_settings, V133). As the sweeper's login, on a timer it holds the live claim of: a transient backoff of
     * a century, a backoff beyond max_backoff, one attempt, a dead letter at one attempt, a series ended by one dead letter
     * are refused, naming the owner's setting, and the row stays as it was; a failure within the bounds is recorded.
     */
    @Test
    void theSweepersLoginCannotChooseItsBackoffsAttemptsOrDeadLetterThresholds() throws Exception {
        String queue = "lp.bounds." + Long.toHexString(System.nanoTime());
        UUID token = UUID.randomUUID();
        admin("INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload, claim_token, claimed_until)"
                + " VALUES ('" + queue + "', 'k', now() - interval '1 second', 'txn-b', queen.timer_uuidv7_v1(now()), '\\x7b7d'::bytea,"
                + " '" + token + "', now() + interval '10 minutes')");
        try {
            String held = "'[{\"tenant_id\": \"" + DEFAULT_TENANT + "\", \"queue\": \"" + queue + "\", \"timer_key\": \"k\","
                    + " \"claim_token\": \"" + token + "\"}]'::jsonb";
            try (Connection c = as(sweeperLogin)) {
                // hidden for a century without an attempt spent
                assertInvalid(c, "SELECT count(*) FROM queen.timer_fail_v2(" + held + ", 'fake', true, interval '100 years',"
                        + " interval '1 second', interval '1 minute', 5)", "max_transient_backoff");
                assertInvalid(c, "SELECT count(*) FROM queen.timer_fail_v2(" + held + ", 'fake', false, interval '1 second',"
                        + " interval '100 years', interval '100 years', 5)", "max_backoff");
                // exhausted by one fake failure, then dead-lettered
                assertInvalid(c, "SELECT count(*) FROM queen.timer_fail_v2(" + held + ", 'fake', false, interval '1 second',"
                        + " interval '1 second', interval '1 minute', 1)", "min_attempts");
                assertInvalid(c, "SELECT count(*) FROM queen.timer_fail_v2(" + held + ", 'fake', false, interval '1 second',"
                        + " interval '1 second', interval '1 minute', NULL)", "min_attempts");
            }
            assertThat(count("SELECT count(*) FROM queen.log_timers WHERE queue = '" + queue + "' AND attempts = 0 AND claim_token = '"
                    + token + "' AND claimed_until > now() + interval '5 minutes'")).as("untouched").isOne();
            admin("UPDATE queen.log_timers SET attempts = 1 WHERE queue = '" + queue + "'");
            try (Connection c = as(sweeperLogin)) {
                assertInvalid(c, "SELECT count(*) FROM queen.timer_dead_letter_v3(" + held + ", 1)", "min_attempts");
                // within the owner's bounds the login records a failure of a timer it holds
                try (Statement st = c.createStatement(); var rs = st.executeQuery("SELECT attempts, exhausted FROM queen.timer_fail_v2("
                        + held + ", 'real', false, interval '1 second', interval '1 second', interval '1 minute', 5)")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1)).isEqualTo(2);
                    assertThat(rs.getBoolean(2)).isFalse();
                }
            }
            assertThat(count("SELECT count(*) FROM queen.timer_dlq_keys WHERE queue = '" + queue + "'")).isZero();

            // a recurring series two dead letters into a run the owner ends at three: a plan saying 1, or none, is refused;
            // one saying it was no dead letter is counted as one all the same, and the series ends
            admin("UPDATE queen.log_timers SET attempts = 5, claim_token = '" + token + "', claimed_until = now() + interval '10 minutes',"
                    + " recurrence = '{\"every\": \"PT1M\", \"startAt\": \"2026-01-01T00:00:00Z\", \"catchUp\": \"all\", \"txn\": \"series\","
                    + " \"seq\": 4, \"deadLettersInRow\": 2}' WHERE queue = '" + queue + "'");
            String next = "\"next\": \"" + java.time.Instant.now().plusSeconds(3600) + "\"";
            try (Connection c = as(sweeperLogin)) {
                assertInvalid(c, "SELECT count(*) FROM queen.timer_dead_letter_v3(" + plan(held, "{" + next + ", \"deadLetter\": true,"
                        + " \"maxDeadLettersInRow\": 1}") + ", 5)", "min_dead_letters_in_row");
                assertInvalid(c, "SELECT count(*) FROM queen.timer_dead_letter_v3(" + plan(held, "{" + next + ", \"deadLetter\": true}")
                        + ", 5)", "min_dead_letters_in_row");
                try (Statement st = c.createStatement(); var rs = st.executeQuery("SELECT count(*) FROM queen.timer_dead_letter_v3("
                        + plan(held, "{" + next + ", \"deadLetter\": false, \"maxDeadLettersInRow\": 3}") + ", 5)")) {
                    rs.next();
                    assertThat(rs.getInt(1)).isOne();
                }
            }
            assertThat(count("SELECT count(*) FROM queen.log_timers WHERE queue = '" + queue + "'")).as("the series ended: no successor").isZero();
            assertThat(count("SELECT count(*) FROM queen.timer_audit_outbox WHERE type = 'dead_lettered' AND kafka_key = '" + queue
                    + "/k' AND event->>'ended' = 'dead_letters'")).isOne();
        } finally {
            // the events of this test are not another test's to publish
            admin("DELETE FROM queen.timer_audit_outbox WHERE kafka_key = '" + queue + "/k'");
            admin("DELETE FROM queen.log_timers WHERE queue = '" + queue + "'");
        }
    }

    /**
     * The audit outbox is emptied only by the holder of the relay lease, and only of the rows its last read handed out
     * (V134, V151). The lease is taken only through timer_audit_lease_v1, which only the relay's roles may call: a login of
     * another role (the operator's) can neither take it nor stop publication by holding the advisory lock the relay took
     * before. timer_audit_delete_v1, granted to both roles, deleted any tenant's unpublished events.
     */
    @Test
    void theAuditOutboxIsEmptiedOnlyByTheRelayHoldingTheLeaseAndOnlyOfWhatItRead() throws Exception {
        String victim = "lp.audit." + Long.toHexString(System.nanoTime());
        long first = outbox(victim + "/a");
        long second = outbox(victim + "/b");
        var operator = db.login("lp_operator", DatabaseRole.OPERATOR);
        try (Connection relay = as(sweeperLogin); Connection other = as(bridgeLogin); Connection op = db.connect(operator)) {
            // the operator's login may not take the lease, and the advisory lock it could always take stops nobody now
            assertRefused(op, "SELECT * FROM queen.timer_audit_lease_v1(NULL)");
            try (Statement st = op.createStatement(); var rs = st.executeQuery("SELECT pg_try_advisory_lock(" + OLD_RELAY_LOCK_KEY + ")")) {
                rs.next();
            }
            // a login that does not hold the lease can neither read for publishing nor delete, whatever it names
            assertRefused(other, "SELECT count(*) FROM queen.timer_audit_read_v3(gen_random_uuid(), '{}', 100000, 100000)");
            assertRefused(other, "SELECT count(*) FROM queen.timer_audit_read_v3(NULL, '{}', 100000, 100000)");
            assertRefused(other, "SELECT queen.timer_audit_delete_v3(gen_random_uuid(), gen_random_uuid(), ARRAY[" + first + ", " + second + "]::bigint[])");
            // the relay takes the lease (as AuditRelay does) and reads under its token
            UUID lease;
            try (Statement st = relay.createStatement(); var rs = st.executeQuery("SELECT token FROM queen.timer_audit_lease_v1(NULL)")) {
                assertThat(rs.next()).as("no other relay runs now").isTrue();
                lease = rs.getObject(1, UUID.class);
            }
            // taken: nobody else gets it while it runs, not another relay login either
            try (Statement st = other.createStatement(); var rs = st.executeQuery("SELECT token FROM queen.timer_audit_lease_v1(NULL)")) {
                assertThat(rs.next()).isFalse();
            }
            UUID token = null;
            try (Statement st = relay.createStatement();
                    var rs = st.executeQuery("SELECT id, read_token FROM queen.timer_audit_read_v3('" + lease + "', '{}', 100000, 100000)")) {
                while (rs.next()) {
                    token = rs.getObject(2, UUID.class);
                }
            }
            assertThat(token).isNotNull();
            long late = outbox(victim + "/late");   // written after the read: never handed out
            String ids = "ARRAY[" + first + ", " + second + ", " + late + "]::bigint[]";
            // the read's token without the lease's, or the lease's with another read token, is refused
            assertRefused(other, "SELECT queen.timer_audit_delete_v3(gen_random_uuid(), '" + token + "', " + ids + ")");
            assertRefused(relay, "SELECT queen.timer_audit_delete_v3('" + lease + "', gen_random_uuid(), " + ids + ")");
            // the relay deletes what it read, and only that
            try (Statement st = relay.createStatement(); var rs = st.executeQuery("SELECT queen.timer_audit_delete_v3('" + lease + "', '"
                    + token + "', ARRAY[" + first + ", " + late + "]::bigint[])")) {
                rs.next();
                assertThat(rs.getInt(1)).isOne();
            }
            assertThat(count("SELECT count(*) FROM queen.timer_audit_outbox WHERE id IN (" + second + ", " + late + ")")).isEqualTo(2);
            try (Statement st = relay.createStatement()) {
                st.execute("SELECT queen.timer_audit_lease_release_v1('" + lease + "')");
            }
            // once it let the lease go its tokens delete nothing more
            assertRefused(relay, "SELECT queen.timer_audit_delete_v3('" + lease + "', '" + token + "', ARRAY[" + second + "]::bigint[])");
        } finally {
            admin("DELETE FROM queen.timer_audit_outbox WHERE kafka_key LIKE '" + victim + "/%'");
        }
    }

    /** The advisory lock key the relay of the release before published under ("queenaud"): any login could hold it. */
    private static final long OLD_RELAY_LOCK_KEY = 0x7175_6565_6e61_7564L;

    /** An unpublished audit event of the default tenant (a verdict, as the bridge writes one); returns its id. */
    private static long outbox(String key) throws SQLException {
        return count("INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event) VALUES ('" + DEFAULT_TENANT + "', '"
                + key + "', 'absent', '{}') RETURNING id");
    }

    /** Issue 47, point 3: a sweeper whose settings the owner's bounds refuse does not start as its login, and says which. */
    @Test
    void aSweeperRefusesToStartWithASettingBeyondTheOwnersBounds() {
        assertThatThrownBy(() -> Sweepers.start(db, Map.of(CommonSettings.JDBC_USER, sweeperLogin, CommonSettings.JDBC_PASSWORD, PASSWORD,
                CommonSettings.DB_ROLE_CHECK, "true", SweeperSettings.MAX_ATTEMPTS, "2", SweeperSettings.TRANSIENT_BACKOFF, "5m")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining(SweeperSettings.MAX_ATTEMPTS + " = 2 is below min_attempts = 5")
                .hasMessageContaining("queen.timer_settings")
                .hasMessageNotContaining(SweeperSettings.TRANSIENT_BACKOFF);
    }

    private static String plan(String held, String plan) {
        return held.replace("\"}]'::jsonb", "\", \"plan\": " + plan + "}]'::jsonb");
    }

    /**
     * Issue 37, point 5: a bridge group's topics, sealed patterns and offsets are changed only by the login bound to
     * the group at its first call; another login of queen_bridge, calling with the group's name, is refused.
     */
    @Test
    void aBridgeGroupIsChangedOnlyByItsOwnLogin() throws Exception {
        String other = "lp_bridge_other_" + Long.toHexString(System.nanoTime());
        admin("CREATE ROLE " + other + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.BRIDGE);
        String group = "lp-victim-" + UUID.randomUUID();
        try {
            // the owner binds the group to its login (V135: never its first caller)
            BridgeGroups.bind(db.dataSource(), group, bridgeLogin, Map.of("victim-topic", DEFAULT_TENANT));
            try (Connection c = as(bridgeLogin); Statement st = c.createStatement()) {
                // the group's start, as its own login
                st.execute("SELECT queen.bridge_topics_register_v1('" + group + "', ARRAY['victim-topic'], ARRAY['" + DEFAULT_TENANT + "']::uuid[])");
                st.execute("SELECT queen.bridge_sealed_queues_set_v1('" + group + "', ARRAY['secret.%'])");
                st.execute("SELECT queen.bridge_offset_start_v1('" + group + "', 'victim-topic', 0, 0, 'empty', 0, 0, NULL)");
            }
            try (Connection c = as(other)) {
                assertRefused(c, "SELECT queen.bridge_topics_register_v1('" + group + "', ARRAY['victim-topic'],"
                        + " ARRAY['00000000-0000-0000-0000-00000000000b']::uuid[])");
                assertRefused(c, "SELECT queen.bridge_sealed_queues_set_v1('" + group + "', '{}')");
                assertRefused(c, "SELECT queen.bridge_offset_start_v1('" + group + "', 'victim-topic', 1, 99, 'empty', 99, 99, NULL)");
                assertRefused(c, "SELECT queen.bridge_apply_v4('" + group + "', '[{\"topic\": \"victim-topic\", \"partition\": 0,"
                        + " \"expected\": 0, \"next\": 1000}]'::jsonb, '[]'::jsonb, '[]'::jsonb, '[]'::jsonb, interval '1 second')");
            }
            assertThat(count("SELECT count(*) FROM queen.bridge_topics WHERE group_id = '" + group + "' AND tenant_id = '" + DEFAULT_TENANT + "'"))
                    .isOne();
            assertThat(count("SELECT count(*) FROM queen.bridge_sealed_queues WHERE group_id = '" + group + "'")).isOne();
            assertThat(count("SELECT max(next_offset) FROM queen.bridge_offsets WHERE group_id = '" + group + "'")).isZero();
        } finally {
            admin("DROP ROLE IF EXISTS " + other);
        }
    }

    /**
     * Issue 47, point 3: a bridge group and its topics are bound by the owner (at migrate), never by the first caller. A
     * login of queen_bridge calling first with a group nobody bound (the victim's, before its bridge starts; a fresh one of
     * its own) is refused and binds nothing; bound to a group of its own, it cannot register another tenant's topic, nor
     * its topic for another tenant; the owner's binding refuses one topic for two tenants; a bridge whose group the owner
     * did not bind does not start, and says what to do.
     */
    @Test
    void aBridgeGroupAndItsTopicsAreBoundByTheOwnerNeverByTheFirstCaller() throws Exception {
        String suffix = Long.toHexString(System.nanoTime());
        String hostile = "lp_bridge_hostile_" + suffix;
        admin("CREATE ROLE " + hostile + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.BRIDGE);
        String victimGroup = "lp-victim-" + suffix;
        String freshGroup = "lp-fresh-" + suffix;
        String hostileGroup = "lp-hostile-" + suffix;
        String topicA = "lp-a-commands-" + suffix;
        String topicB = "lp-b-commands-" + suffix;
        UUID tenantB = UUID.fromString("00000000-0000-0000-0000-00000000000b");
        try {
            BridgeGroups.bind(db.dataSource(), victimGroup + "-running", bridgeLogin, Map.of(topicA, DEFAULT_TENANT));
            try (Connection c = as(hostile)) {
                // first at a group nobody bound: the victim's offsets, a fresh group registering tenant A's topic for tenant B
                assertRefused(c, "SELECT queen.bridge_offset_start_v1('" + victimGroup + "', '" + topicA + "', 0, 0, 'empty', 0, 0, NULL)");
                assertRefused(c, "SELECT queen.bridge_topics_register_v1('" + freshGroup + "', ARRAY['" + topicA + "'], ARRAY['" + tenantB + "']::uuid[])");
                assertRefused(c, "SELECT queen.bridge_sealed_queues_set_v1('" + victimGroup + "', '{}')");
                assertRefused(c, "SELECT queen.bridge_apply_v4('" + victimGroup + "', '[{\"topic\": \"" + topicA + "\", \"partition\": 0,"
                        + " \"expected\": null, \"next\": 1000}]'::jsonb, '[]'::jsonb, '[]'::jsonb, '[]'::jsonb, interval '1 second')");
            }
            assertThat(count("SELECT count(*) FROM queen.bridge_groups WHERE group_id IN ('" + victimGroup + "', '" + freshGroup + "')")).isZero();
            assertThat(count("SELECT count(*) FROM queen.bridge_offsets WHERE group_id = '" + victimGroup + "'")).isZero();

            // bound by the owner to a group of its own, with its own topic: nobody else's topic, and its own for no other tenant
            BridgeGroups.bind(db.dataSource(), hostileGroup, hostile, Map.of(topicB, tenantB));
            try (Connection c = as(hostile); Statement st = c.createStatement()) {
                st.execute("SELECT queen.bridge_topics_register_v1('" + hostileGroup + "', ARRAY['" + topicB + "'], ARRAY['" + tenantB + "']::uuid[])");
                assertRefused(c, "SELECT queen.bridge_topics_register_v1('" + hostileGroup + "', ARRAY['" + topicA + "'], ARRAY['" + tenantB + "']::uuid[])");
                assertRefused(c, "SELECT queen.bridge_topics_register_v1('" + hostileGroup + "', ARRAY['" + topicB + "'], ARRAY['" + DEFAULT_TENANT + "']::uuid[])");
            }
            // tenant A's topic stands for tenant A alone: a replay of A's dead letters finds one topic, A's
            assertThat(count("SELECT count(*) FROM queen.bridge_topics WHERE topic = '" + topicA + "'")).isOne();
            assertThat(count("SELECT count(*) FROM queen.bridge_topics WHERE topic = '" + topicA + "' AND tenant_id = '" + DEFAULT_TENANT + "'")).isOne();
            // nor does the owner bind one topic to two tenants by mistake
            assertThatThrownBy(() -> BridgeGroups.bind(db.dataSource(), hostileGroup, hostile, Map.of(topicA, tenantB)))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("22023"))
                    .hasMessageContaining(victimGroup + "-running");

            // a bridge whose group the owner did not bind does not start as its login
            String topic = TestKafka.newTopic("lp-unbound", 1);
            assertThatThrownBy(() -> BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridgeSettings(topic, "lp-audit-x", hostile))),
                    Dependencies.defaults(new SimpleMeterRegistry())))
                    .hasMessageContaining("is bound to no login").hasMessageContaining("bridge.login=" + hostile);
        } finally {
            admin("DELETE FROM queen.bridge_topics WHERE group_id IN ('" + hostileGroup + "', '" + victimGroup + "-running')");
            admin("DELETE FROM queen.bridge_groups WHERE group_id IN ('" + hostileGroup + "', '" + victimGroup + "-running')");
            admin("DROP ROLE IF EXISTS " + hostile);
        }
    }

    /** Issue 37, point 5: the start check refuses CREATEROLE and a second service's group role. */
    @Test
    void aServiceRefusesALoginThatCanGrantItselfMoreOrHoldsAnotherServicesRole() throws Exception {
        String suffix = Long.toHexString(System.nanoTime());
        String creator = "lp_creator_" + suffix;
        String twoHats = "lp_two_hats_" + suffix;
        String operatorToo = "lp_operator_too_" + suffix;
        admin("CREATE ROLE " + creator + " LOGIN CREATEROLE PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.SWEEPER);
        admin("CREATE ROLE " + twoHats + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.SWEEPER + ", " + DatabaseRole.BRIDGE);
        admin("CREATE ROLE " + operatorToo + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.BRIDGE + ", " + DatabaseRole.OPERATOR);
        try {
            assertThatThrownBy(() -> Sweepers.start(db, Map.of(CommonSettings.JDBC_USER, creator, CommonSettings.JDBC_PASSWORD, PASSWORD,
                    CommonSettings.DB_ROLE_CHECK, "true")))
                    .isInstanceOf(ConfigException.class).hasMessageContaining("CREATEROLE");
            assertThatThrownBy(() -> Sweepers.start(db, Map.of(CommonSettings.JDBC_USER, twoHats, CommonSettings.JDBC_PASSWORD, PASSWORD,
                    CommonSettings.DB_ROLE_CHECK, "true")))
                    .isInstanceOf(ConfigException.class).hasMessageContaining("also a member of " + DatabaseRole.BRIDGE);
            String topic = TestKafka.newTopic("lp-two-hats", 1);
            assertThatThrownBy(() -> BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridgeSettings(topic, "lp-audit-x", operatorToo))), Dependencies.defaults(new SimpleMeterRegistry())))
                    .isInstanceOf(ConfigException.class).hasMessageContaining("also a member of " + DatabaseRole.OPERATOR);
        } finally {
            for (String login : List.of(creator, twoHats, operatorToo)) {
                admin("DROP ROLE IF EXISTS " + login);
            }
        }
    }

    /**
     * Issue 37, point 5: a function the owner creates (as a migration does) is not callable by PUBLIC at any moment,
     * not only after db/least-privilege.sql has run: Migrations set the owner's default privileges.
     */
    @Test
    void aFunctionTheOwnerCreatesHasNoPublicExecuteEvenBeforeTheGrantsRun() throws Exception {
        String name = "queen.lp_new_fn_" + Long.toHexString(System.nanoTime());
        admin("CREATE FUNCTION " + name + "() RETURNS INT LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog AS 'SELECT 1'");
        try (Connection c = as(sweeperLogin)) {
            assertRefused(c, "SELECT " + name + "()");
        } finally {
            admin("DROP FUNCTION " + name + "()");
        }
    }

    private static void assertInvalid(Connection c, String sql, String naming) {
        assertThatThrownBy(() -> {
            try (Statement st = c.createStatement()) {
                st.execute(sql);
            }
        }).as(sql).isInstanceOfSatisfying(SQLException.class, e -> {
            assertThat(e.getSQLState()).as(sql).isEqualTo("22023");
            assertThat(e.getMessage()).contains(naming);
        });
    }

    private static void assertRefused(Connection c, String sql) {
        assertThatThrownBy(() -> {
            try (Statement st = c.createStatement()) {
                st.execute(sql);
            }
        }).as(sql).isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).as(sql).isEqualTo("42501"));
    }

    private static Connection as(String login) throws SQLException {
        Connection c = DriverManager.getConnection(db.jdbcUrl(), login, PASSWORD);
        c.setAutoCommit(true);
        return c;
    }

    private static void admin(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static long count(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); var rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static Map<String, String> bridgeSettings(String topic, String audit, String user) {
        Map<String, String> s = new HashMap<>();
        s.put("jdbc.url", db.jdbcUrl());
        s.put("jdbc.user", user);
        s.put("jdbc.password", user.equals(db.user()) ? db.password() : PASSWORD);
        s.put("jdbc.pool.size", "4");
        s.put("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        s.put("command.topics", topic);
        s.put("audit.topic", audit);
        s.put("audit.relay.poll.interval", "50ms");
        s.put("bridge.group.id", "lp-" + UUID.randomUUID());
        s.put("bridge.start.position", "earliest");   // the test produces before the bridge joins: apply those records
        s.put("http.port", "0");
        s.put("db.retry.backoff.max", "1s");
        return s; // db.role.check and migrate.on.start at their defaults (true): the role is checked, the schema must be current
    }
}
