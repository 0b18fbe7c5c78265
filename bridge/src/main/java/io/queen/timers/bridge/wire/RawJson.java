package io.queen.timers.bridge.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The payload exactly as the producer wrote it. A tree (JsonNode) would round numbers to a double
 * ({@code 0.12345678901234567890123} to {@code 0.12345678901234568}, {@code 1e400} to Infinity), and
 * re-escape strings; so the payload is cut out of the record's bytes and only the whitespace between
 * tokens is dropped. The caller has already parsed the whole value (well-formed, no duplicate keys):
 * this class only checks the encoding, locates and compacts.
 */
final class RawJson {

    private static final JsonFactory FACTORY = new JsonFactory();

    private RawJson() {}

    /** The compact text of the whole value (the headers form). */
    static byte[] whole(byte[] value) throws IOException {
        try (JsonParser p = FACTORY.createParser(value)) {
            p.nextToken();
            return valueAt(p, value);
        }
    }

    /** The compact text of the top-level field {@code name} of the object {@code value}, or null when absent. */
    static byte[] field(byte[] value, String name) throws IOException {
        try (JsonParser p = FACTORY.createParser(value)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                p.nextToken();
                if (field.equals(name)) {
                    return valueAt(p, value);
                }
                p.skipChildren();
            }
            return null;
        }
    }

    /** The value whose first token {@code p} is on: its bytes from that token to its end, compacted. */
    private static byte[] valueAt(JsonParser p, byte[] value) throws IOException {
        int start = (int) p.currentTokenLocation().getByteOffset();
        if (p.currentToken().isStructStart()) {
            p.skipChildren();
        } else {
            p.finishToken(); // a string's text is read lazily: read it, so the location is past its closing quote
        }
        int end = (int) p.currentLocation().getByteOffset();
        return compact(value, start, end);
    }

    /** {@code json[from, to)} without the whitespace outside strings (RFC 8259 whitespace: space, tab, LF, CR). */
    static byte[] compact(byte[] json, int from, int to) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(to - from);
        boolean inString = false;
        for (int i = from; i < to; i++) {
            byte b = json[i];
            if (inString) {
                out.write(b);
                if (b == '\\' && i + 1 < to) {
                    out.write(json[++i]);
                } else if (b == '"') {
                    inString = false;
                }
            } else if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                out.write(b);
                inString = b == '"';
            }
        }
        return out.toByteArray();
    }

    /**
     * Jackson also reads UTF-16/32 and is lenient with some invalid UTF-8 (a surrogate encoded in three
     * bytes); the payload is stored as bytes and delivered as UTF-8 JSON, so the value must be strict UTF-8
     * before its bytes are cut. Called on the whole value before it is parsed.
     */
    static void strictUtf8(byte[] bytes) throws CharacterCodingException {
        for (byte b : bytes) {
            if (b == 0) { // never in UTF-8 JSON text (not even inside a string); UTF-16/32 text is full of them
                throw new CharacterCodingException();
            }
        }
        StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes));
    }
}
