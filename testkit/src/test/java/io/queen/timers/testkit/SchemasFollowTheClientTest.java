package io.queen.timers.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.client.audit.EventType;
import io.queen.timers.client.audit.SeriesEnd;
import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.client.command.WireFormat;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The JSON Schemas (schemas/, as the client jar packages them) name what the client's WireFormat, Op, RejectReason and EventType name. */
class SchemasFollowTheClientTest {

    static JsonNode schema(String name) throws Exception {
        try (InputStream in = SchemasFollowTheClientTest.class.getClassLoader().getResourceAsStream("io/queen/timers/client/schemas/" + name)) {
            assertThat(in).as(name + " packaged in the client jar").isNotNull();
            return new ObjectMapper().readTree(in);
        }
    }

    static Set<String> names(JsonNode object) {
        Set<String> out = new TreeSet<>();
        object.fieldNames().forEachRemaining(out::add);
        return out;
    }

    static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    /**
     * Each schema names its version in its $id (docs/formats.md#audit-events-on-the-topic, how the schemas evolve), and carries no keyword of its own: a
     * strict validator (ajv's default) refuses a schema with an unknown keyword such as x-version.
     */
    @Test
    void everySchemaHasAVersionedIdAndAVersion() throws Exception {
        for (String name : List.of("audit-event", "command-envelope", "command-headers")) {
            JsonNode s = schema(name + ".schema.json");
            assertThat(s.path("$id").asText()).as(name + " $id").matches("https://queen-timers\\.io/schemas/" + name + "/v[1-9][0-9]*\\.json");
            assertThat(names(s)).as(name + ": top-level keywords of draft 2020-12 only")
                    .isSubsetOf("$schema", "$id", "title", "description", "type", "properties", "required", "additionalProperties",
                            "$defs", "oneOf", "anyOf", "allOf", "if", "then", "else", "not", "propertyNames", "examples", "$comment");
        }
    }

    @Test
    void commandSchemasNameTheFieldsHeadersOpsAndLimitsOfWireFormat() throws Exception {
        JsonNode envelope = schema("command-envelope.schema.json");
        assertThat(names(envelope.get("properties"))).isEqualTo(new TreeSet<>(WireFormat.FIELDS));
        assertThat(texts(envelope.at("/properties/op/enum"))).containsExactlyElementsOf(Arrays.stream(Op.values()).map(Op::wireName).toList());
        assertThat(envelope.at("/properties/queue/pattern").asText()).isEqualTo("^" + WireFormat.QUEUE_PATTERN.pattern() + "$");
        assertThat(envelope.at("/properties/timerKey/maxLength").asInt()).isEqualTo(WireFormat.TIMER_KEY_MAX_CODE_POINTS);
        assertThat(envelope.at("/properties/partition/maxLength").asInt()).isEqualTo(WireFormat.PARTITION_MAX_CODE_POINTS);
        assertThat(envelope.at("/properties/txn/maxLength").asInt()).isEqualTo(WireFormat.TXN_MAX_CODE_POINTS);
        JsonNode headers = schema("command-headers.schema.json");
        assertThat(names(headers.get("properties"))).isEqualTo(new TreeSet<>(WireFormat.HEADERS));
    }

    @Test
    void auditSchemaNamesEveryEventTypeAndRejectReason() throws Exception {
        JsonNode audit = schema("audit-event.schema.json");
        List<String> types = Arrays.stream(EventType.values()).map(EventType::wireName).toList();
        assertThat(texts(audit.at("/properties/type/enum"))).containsExactlyElementsOf(types);
        assertThat(names(audit.get("$defs"))).containsAll(types);
        assertThat(texts(audit.at("/$defs/rejected/properties/reason/enum")))
                .containsExactlyElementsOf(Arrays.stream(RejectReason.values()).map(RejectReason::wireName).toList());
        assertThat(texts(audit.at("/$defs/seriesEnd/enum"))).containsExactlyElementsOf(Arrays.stream(SeriesEnd.values())
                .filter(e -> e != SeriesEnd.OTHER).map(SeriesEnd::wireName).toList());
    }
}
