package io.queen.timers.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.queen.timers.http.api.ApiServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * openapi.yaml (OpenAPI 3.1) says what the server serves: read as YAML, its routes are exactly the two the server
 * routes, every error answer is application/problem+json of the Problem schema, and that schema, compiled by a real
 * JSON Schema validator (2020-12, the dialect of OpenAPI 3.1, {@link OpenApiSchemas}), accepts every problem the end-to-end
 * tests receive.
 */
class OpenApiContractTest {

    static final JsonNode DOC = OpenApiSchemas.DOC;
    static final Schema PROBLEM = OpenApiSchemas.PROBLEM;

    @Test
    void aReadAnswerIsHeldToItsSchema() {
        OpenApiSchemas.valid("TimerPage", "{\"queue\":\"q\",\"nextCursor\":null,\"timers\":[]}");
        assertThat(SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(OpenApiSchemas.schemaWithComponents("TimerPage"),
                InputFormat.JSON).validate("{\"queue\":\"q\",\"timers\":[{\"timerKey\":1}]}", InputFormat.JSON)).isNotEmpty();
    }

    @Test
    void theRoutesAreExactlyThoseTheServerServes() {
        assertThat(DOC.get("openapi").asText()).startsWith("3.1.");
        Map<String, List<String>> routes = new TreeMap<>();
        DOC.get("paths").fields().forEachRemaining(p -> {
            List<String> methods = new ArrayList<>();
            p.getValue().fieldNames().forEachRemaining(methods::add);
            routes.put(p.getKey(), methods);
        });
        assertThat(routes).isEqualTo(Map.of(
                ApiServer.TIMERS, List.of("get", "post"),
                ApiServer.TIMERS + "/{queue}/{timerKey}", List.of("get", "delete"),
                ApiServer.TIMERS + ":find", List.of("get"),
                "/api/v1/dead-letters", List.of("get"),
                "/api/v1/dead-letters/{id}", List.of("get", "delete"),
                "/api/v1/dead-letters/{id}/replay", List.of("post"),
                "/api/v1/offsets", List.of("get")));
    }

    @Test
    void everyErrorIsAProblemAndEveryReferenceResolves() {
        DOC.get("paths").forEach(path -> path.forEach(op -> op.get("responses").fields().forEachRemaining(r -> {
            // a response is a reference to components/responses or written in place (a read route's own 200)
            String ref = r.getValue().has("$ref") ? r.getValue().get("$ref").asText() : null;
            JsonNode resolved = ref == null ? r.getValue() : DOC.at(ref.substring(1));
            assertThat(resolved.isMissingNode()).as(ref).isFalse();
            int status = Integer.parseInt(r.getKey());
            if (status >= 400 && status != 422) {
                assertThat(resolved.at("/content").fieldNames().next()).as(r.getKey()).isEqualTo("application/problem+json");
            }
        })));
        List<String> refs = new ArrayList<>();
        collect(DOC, refs);
        refs.forEach(ref -> assertThat(DOC.at(ref.substring(1)).isMissingNode()).as(ref).isFalse());
    }

    @Test
    void theProblemSchemaAcceptsAProblemAndRefusesOtherShapes() {
        OpenApiSchemas.validProblem("{\"type\":\"/problems/too-large\",\"title\":\"t\",\"status\":413,\"detail\":\"d\"}");
        assertThat(PROBLEM.validate("{\"type\":\"/problems/other\",\"title\":\"t\",\"status\":413,\"detail\":\"d\"}", InputFormat.JSON)).isNotEmpty();
        assertThat(PROBLEM.validate("{\"results\":[]}", InputFormat.JSON)).isNotEmpty();
    }

    private static void collect(JsonNode n, List<String> refs) {
        if (n.isObject()) {
            n.fields().forEachRemaining(e -> {
                if (e.getKey().equals("$ref")) {
                    refs.add(e.getValue().asText());
                } else {
                    collect(e.getValue(), refs);
                }
            });
        } else if (n.isArray()) {
            n.forEach(c -> collect(c, refs));
        }
    }
}
