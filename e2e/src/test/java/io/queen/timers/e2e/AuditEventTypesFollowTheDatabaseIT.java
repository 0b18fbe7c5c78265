package io.queen.timers.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.audit.EventType;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.WireSchemas;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every event type the database may write (the CHECK of queen.timer_audit_outbox.type, read from the catalog) is
 * one the JSON Schema and the client name, and the other way round: a type added to the outbox without the schema
 * and the client (as offset_moved was, V040) breaks every typed consumer, so the three cannot drift again.
 */
class AuditEventTypesFollowTheDatabaseIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String DEFAULT_TENANT = "00000000-0000-0000-0000-000000000001";

    @Test
    void theOutboxsTypesAreTheSchemasAndTheClients() throws Exception {
        String check = one("SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c"
                + " WHERE c.conrelid = 'queen.timer_audit_outbox'::regclass AND c.contype = 'c'"
                + " AND pg_get_constraintdef(c.oid) LIKE '%type = ANY%'");
        Set<String> database = new TreeSet<>();
        Matcher m = Pattern.compile("'([a-z_]+)'::text").matcher(check);
        while (m.find()) {
            database.add(m.group(1));
        }
        assertThat(database).as("types in %s", check).hasSizeGreaterThanOrEqualTo(10);

        Set<String> client = new TreeSet<>(Arrays.stream(EventType.values()).map(EventType::wireName).toList());
        JsonNode schema;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("io/queen/timers/client/schemas/audit-event.schema.json")) {
            schema = new ObjectMapper().readTree(in);
        }
        Set<String> schemaTypes = new TreeSet<>();
        schema.at("/properties/type/enum").forEach(n -> schemaTypes.add(n.asText()));
        List<String> defs = new ArrayList<>();
        schema.get("$defs").fieldNames().forEachRemaining(defs::add);

        assertThat(client).as("the client's EventType").isEqualTo(database);
        assertThat(schemaTypes).as("schemas/audit-event.schema.json's type enum").isEqualTo(database);
        assertThat(defs).as("one $defs shape per type").containsAll(database);
    }

    /**
     * The reject reasons: the closed list is the code's (RejectReason, whose wire name the bridge writes into every
     * {@code rejected} event; no database constraint holds them), and the schema's enum, docs/commands.md's closed list and
     * the client (the same enum) must name exactly it: a reason added to the code alone would be refused by every
     * validating consumer, one added to docs/commands.md alone would be a promise nothing keeps.
     */
    @Test
    void theRejectReasonsOfTheCodeAreTheSchemasAndTheReadmesClosedList() throws Exception {
        Set<String> code = new TreeSet<>(Arrays.stream(RejectReason.values()).map(RejectReason::wireName).toList());
        assertThat(code).hasSizeGreaterThanOrEqualTo(15).contains("internal", "tenant_quota");
        JsonNode schema;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("io/queen/timers/client/schemas/audit-event.schema.json")) {
            schema = new ObjectMapper().readTree(in);
        }
        Set<String> schemaReasons = new TreeSet<>();
        schema.at("/$defs/rejected/properties/reason/enum").forEach(n -> schemaReasons.add(n.asText()));
        assertThat(schemaReasons).as("schemas/audit-event.schema.json's rejected.reason enum").isEqualTo(code);

        String readme = Files.readString(Path.of("..", "docs", "commands.md"));
        int start = readme.indexOf("\n## Reject reasons (closed list)\n");
        assertThat(start).as("docs/commands.md section 'Reject reasons (closed list)'").isNotNegative();
        String section = readme.substring(start, readme.indexOf("\n## ", start + 1));
        Set<String> listed = new TreeSet<>();
        Matcher row = Pattern.compile("(?m)^\\| `([a-z_]+)` \\|").matcher(section);
        while (row.find()) {
            listed.add(row.group(1));
        }
        assertThat(listed).as("the closed list of reject reasons in docs/commands.md").isEqualTo(code);
    }

    @Test
    void anOffsetMovedEventAsTheRelayPublishesItMatchesTheSchemaAndParses() throws Exception {
        execute("INSERT INTO queen.bridge_offsets (group_id, topic, \"partition\", next_offset) VALUES ('g', 'cmds', 0, 40)");
        one("SELECT previous_offset::text FROM queen.bridge_offset_set_v2('g', 'cmds', 0, 7, 'replay after the incident', true,"
                + " '" + DEFAULT_TENANT + "', 'ops@laptop')");
        String value = one("SELECT (jsonb_build_object('eventId', event_id, 'type', type, 'at', created_at, 'tenant', tenant_id)"
                + " || event)::text FROM queen.timer_audit_events WHERE type = 'offset_moved'");
        AuditEvent e = WireSchemas.auditEvent(value.getBytes(StandardCharsets.UTF_8));
        assertThat(e).isInstanceOfSatisfying(AuditEvent.OffsetMoved.class, o -> {
            assertThat(o.group()).isEqualTo("g");
            assertThat(o.partition()).isZero();
            assertThat(o.from()).isEqualTo(40L);
            assertThat(o.to()).isEqualTo(7L);
            assertThat(o.replay()).isTrue();
            assertThat(o.by()).startsWith(db.user() + "@");
            assertThat(o.clientLabel()).isEqualTo("ops@laptop");
        });
    }

    private static String one(String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            assertThat(rs.next()).as(sql).isTrue();
            return rs.getString(1);
        }
    }

    private static void execute(String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
