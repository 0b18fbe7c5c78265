package io.queen.timers.testkit;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.audit.AuditEvents;
import io.queen.timers.client.command.WireFormat;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;

/**
 * The JSON Schemas of {@code schemas/} (as the client jar packages them), applied by a real validator
 * (networknt json-schema-validator, draft 2020-12) to what the tests send and read: every command
 * sent through {@link TestKafka#commandProducer()} and every audit event read through
 * {@link #auditEvent}. So the schemas cannot drift from the code: a field the bridge or the relay
 * writes and the schema does not know fails the test that met it.
 */
public final class WireSchemas {

    private static final String ROOT = "io/queen/timers/client/schemas/";
    /**
     * Read as the bridge reads a command (no duplicate keys, no trailing content), numbers kept exact
     * (1e400 stays a number, not Infinity) so the validator sees what was sent.
     */
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS);
    private static final SchemaRegistry REGISTRY = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
    private static final Schema ENVELOPE = load("command-envelope.schema.json");
    private static final Schema HEADERS = load("command-headers.schema.json");
    private static final Schema AUDIT = load("audit-event.schema.json");

    private WireSchemas() {}

    private static Schema load(String name) {
        try (InputStream in = WireSchemas.class.getClassLoader().getResourceAsStream(ROOT + name)) {
            if (in == null) {
                throw new IllegalStateException("schema " + name + " is not on the class path under " + ROOT + " (the client jar packages schemas/)");
            }
            return REGISTRY.getSchema(new String(in.readAllBytes(), StandardCharsets.UTF_8), InputFormat.JSON);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Violations of the command envelope schema by {@code json}, empty when it is valid. */
    public static List<String> envelopeErrors(String json) {
        return validate(ENVELOPE, json);
    }

    /** Violations of the headers-form schema by an object of {@code queen-*} header name to value. */
    public static List<String> headersErrors(String json) {
        return validate(HEADERS, json);
    }

    /** Violations of the audit event schema by {@code json}, empty when it is valid. */
    public static List<String> auditEventErrors(String json) {
        return validate(AUDIT, json);
    }

    /**
     * What a producer following the schemas would be told about {@code record}: empty when it is a
     * well-formed command in either form with the right key; otherwise one line per violation.
     */
    public static List<String> commandErrors(ProducerRecord<byte[], byte[]> record) {
        List<String> errors = new ArrayList<>();
        // The form is the bridge's rule: a record with a queen-op header (exact name) is in the headers form.
        boolean headersForm = record.headers().lastHeader(WireFormat.H_OP) != null;
        JsonNode command;
        if (headersForm) {
            ObjectNode headers = JSON.createObjectNode();
            for (Header h : record.headers()) {
                String name = h.key().toLowerCase(Locale.ROOT);
                if (!name.startsWith(WireFormat.HEADER_PREFIX)) {
                    continue;
                }
                String value = utf8(h.value() == null ? new byte[0] : h.value()); // as the bridge reads a null header: empty
                if (value == null) {
                    errors.add("header " + h.key() + " is not UTF-8");
                } else if (headers.has(name)) {
                    errors.add("header " + h.key() + " appears twice");
                } else {
                    headers.put(name, value);
                }
            }
            errors.addAll(headersErrors(headers.toString()));
            if (record.value() != null && record.value().length > 0 && json(record.value()) == null) {
                errors.add("value (the payload) is not UTF-8 JSON");
            }
            command = headers;
        } else {
            command = json(record.value());
            if (command == null) {
                errors.add("value is not UTF-8 JSON");
                return errors;
            }
            JsonNode shape = command;
            if (command.isObject() && command.has(WireFormat.PAYLOAD)) {
                // The schema says nothing about the payload but its presence; the validator's own parser would
                // stop at a nesting depth the bridge allows, so the payload's value is left out of its check.
                shape = command.deepCopy();
                ((ObjectNode) shape).putNull(WireFormat.PAYLOAD);
            }
            errors.addAll(envelopeErrors(shape.toString()));
        }
        JsonNode queue = command.get(headersForm ? WireFormat.H_QUEUE : WireFormat.QUEUE);
        JsonNode timerKey = command.get(headersForm ? WireFormat.H_TIMER_KEY : WireFormat.TIMER_KEY);
        String key = record.key() == null ? null : utf8(record.key());
        if (queue != null && queue.isTextual() && timerKey != null && timerKey.isTextual()
                && !WireFormat.key(queue.textValue(), timerKey.textValue()).equals(key)) {
            errors.add("record key is not '<queue>/<timerKey>'");
        }
        return errors;
    }

    /** {@code value} checked against the audit event schema and parsed by the client; an AssertionError names what is wrong. */
    public static AuditEvent auditEvent(byte[] value) {
        String json = utf8(value);
        if (json == null) {
            throw new AssertionError("audit event is not UTF-8");
        }
        List<String> errors = auditEventErrors(json);
        if (!errors.isEmpty()) {
            throw new AssertionError("audit event does not match schemas/audit-event.schema.json: " + errors + "\n  " + json);
        }
        try {
            return AuditEvents.parse(json);
        } catch (AuditEvents.MalformedEvent e) {
            throw new AssertionError("audit event valid by the schema but not by the client: " + e.getMessage() + "\n  " + json, e);
        }
    }

    /** The value as the bridge reads it (strict UTF-8, Jackson from bytes), or null when it is not JSON. */
    private static JsonNode json(byte[] value) {
        if (value == null || utf8(value) == null) {
            return null;
        }
        try {
            return JSON.readTree(value);
        } catch (IOException e) {
            return null;
        }
    }

    private static String utf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static List<String> validate(Schema schema, String json) {
        try {
            return schema.validate(json, InputFormat.JSON).stream().map(Error::toString).toList();
        } catch (RuntimeException unreadable) {
            // e.g. nesting deeper than the validator reads (500): outside the payload only strings and numbers are valid
            return List.of("the validator cannot read it: " + unreadable.getMessage());
        }
    }
}
