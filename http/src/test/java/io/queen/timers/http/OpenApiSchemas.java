package io.queen.timers.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.InputStream;

/**
 * openapi.yaml (OpenAPI 3.1) as a test reads it: the document, and its schemas compiled by a real JSON Schema validator
 * (2020-12, the dialect of OpenAPI 3.1). {@link OpenApiContractTest} checks the document; the end-to-end tests of the
 * API (e2e, package http) hold every answer they receive to it. In this module's test-jar for them.
 */
public final class OpenApiSchemas {

    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    static final JsonNode DOC = read();
    static final Schema PROBLEM = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
            .getSchema(DOC.at("/components/schemas/Problem").toString(), InputFormat.JSON);

    private OpenApiSchemas() {
    }

    static JsonNode read() {
        try (InputStream in = OpenApiSchemas.class.getResourceAsStream("/openapi.yaml")) {
            return YAML.readTree(in);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Fails when {@code body} is not a Problem of openapi.yaml. */
    public static void validProblem(String body) {
        var errors = PROBLEM.validate(body, InputFormat.JSON);
        assertThat(errors).as(body).isEmpty();
    }

    /** Fails when {@code body} is not of the schema {@code name} of openapi.yaml (components/schemas), references resolved. */
    public static void valid(String name, String body) {
        var errors = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
                .getSchema(schemaWithComponents(name), InputFormat.JSON).validate(body, InputFormat.JSON);
        assertThat(errors).as(name + ": " + body).isEmpty();
    }

    /** The schema with the document's components beside it, so its "#/components/schemas/..." references resolve. */
    static String schemaWithComponents(String name) {
        var root = YAML.createObjectNode();
        root.put("$ref", "#/components/schemas/" + name);
        root.set("components", DOC.get("components"));
        return root.toString();
    }
}
