package io.queen.timers.http.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.WireFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A request turned into command record values, judged no further than HTTP needs: the body is a JSON array of
 * operations or {@code {"operations": [...]}}, each operation is sent on as the envelope a Kafka producer writes, its
 * bytes exactly as the request carried them. Every field of an operation (op, queue, timerKey, delayMs, deliverAt,
 * horizon, payload size, txn, server-owned names, duplicate keys ...) is the bridge's to judge, so an HTTP caller gets
 * the verdicts and reject reasons a Kafka producer gets and there is one judge of a command, not two that could differ.
 * PRICE: a mistake in one operation is found after it is written to the topic (a rejected verdict and its audit
 * event), not before.
 */
final class Operations {

    /** One command: its envelope bytes and the record key {@code <queue>/<timerKey>} when the operation names both. */
    record Command(byte[] value, String key) {}

    static final String OPERATIONS = "operations";
    private static final JsonFactory FACTORY = new JsonFactory();
    private static final ObjectMapper LENIENT = new ObjectMapper();

    private Operations() {}

    /** The operations of a POST body, at most {@code maxOps}. @throws Refusal a 400 or 413 problem */
    static List<Command> ofBody(byte[] body, int maxOps) throws Refusal {
        requireUtf8(body);
        List<Command> out = new ArrayList<>();
        try (JsonParser p = FACTORY.createParser(body)) {
            JsonToken t = p.nextToken();
            if (t == JsonToken.START_OBJECT) {
                String field = p.nextFieldName();
                if (!OPERATIONS.equals(field)) {
                    throw new Refusal(Problem.badRequest("an object body must be {\"operations\": [...]} and nothing else"));
                }
                if (p.nextToken() != JsonToken.START_ARRAY) {
                    throw new Refusal(Problem.badRequest("\"operations\" must be an array"));
                }
                elements(body, p, maxOps, out);
                if (p.nextToken() != JsonToken.END_OBJECT) {
                    throw new Refusal(Problem.badRequest("an object body must be {\"operations\": [...]} and nothing else"));
                }
            } else if (t == JsonToken.START_ARRAY) {
                elements(body, p, maxOps, out);
            } else {
                throw new Refusal(Problem.badRequest("the body must be a JSON array of operations or {\"operations\": [...]}"));
            }
            if (p.nextToken() != null) {
                throw new Refusal(Problem.badRequest("content after the JSON value"));
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new Refusal(Problem.badRequest("the body is not valid JSON: " + e.getOriginalMessage()));
        } catch (IOException e) {
            throw new Refusal(Problem.badRequest("the body could not be read: " + e.getMessage()));
        }
        if (out.isEmpty()) {
            throw new Refusal(Problem.badRequest("no operations"));
        }
        return out;
    }

    /**
     * JSON between systems is UTF-8 without a byte order mark (RFC 8259, 8.1), and each operation is cut out of the body
     * by its byte offsets, which Jackson gives only for a body it reads as UTF-8. Jackson guesses UTF-16 or UTF-32 from a
     * byte order mark or from NUL bytes among the first four, so both are refused here, as is any byte sequence that is not
     * UTF-8, with where it is; a raw NUL is never JSON (a control character must be escaped).
     */
    static void requireUtf8(byte[] body) throws Refusal {
        if (body.length >= 3 && (body[0] & 0xff) == 0xEF && (body[1] & 0xff) == 0xBB && (body[2] & 0xff) == 0xBF) {
            throw new Refusal(Problem.badRequest("the body starts with a byte order mark: send JSON as UTF-8 without one (RFC 8259)"));
        }
        for (int i = 0; i < body.length; i++) {
            if (body[i] == 0) {
                throw new Refusal(Problem.badRequest("the body holds a NUL byte at offset " + i + ": it is not UTF-8 JSON (UTF-16 or"
                        + " UTF-32?); send JSON as UTF-8"));
            }
        }
        CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(body);
        CharBuffer chars = CharBuffer.allocate(4096); // checked, not kept: emptied whenever full
        for (CoderResult r = utf8.decode(in, chars, true); !r.isUnderflow(); r = utf8.decode(in, chars, true)) {
            if (r.isError()) {
                throw new Refusal(Problem.badRequest("the body is not UTF-8: a byte sequence that is not UTF-8 at offset " + in.position()
                        + "; send JSON as UTF-8 (RFC 8259)"));
            }
            chars.clear();
        }
    }

    private static void elements(byte[] body, JsonParser p, int maxOps, List<Command> out) throws IOException, Refusal {
        while (p.nextToken() != JsonToken.END_ARRAY) {
            if (out.size() == maxOps) {
                throw new Refusal(Problem.tooLarge("more than " + maxOps + " operations in one request (api.max.ops)"));
            }
            long start = p.currentTokenLocation().getByteOffset();
            p.skipChildren();
            long end = p.currentLocation().getByteOffset();
            if (start < 0 || end > body.length || end < start) {
                // a parser that lost the byte offsets (a body not read as UTF-8): refused, never an index out of bounds
                throw new Refusal(Problem.badRequest("the body could not be read as UTF-8 JSON"));
            }
            byte[] value = Arrays.copyOfRange(body, (int) start, (int) end);
            out.add(new Command(value, keyOf(value)));
        }
    }

    /** {@code <queue>/<timerKey>} when the operation is an object naming both as strings; else null (the bridge rejects it). */
    private static String keyOf(byte[] value) {
        try {
            JsonNode n = LENIENT.readTree(value);
            JsonNode q = n == null ? null : n.get(WireFormat.QUEUE);
            JsonNode k = n == null ? null : n.get(WireFormat.TIMER_KEY);
            return q != null && q.isTextual() && k != null && k.isTextual() ? WireFormat.key(q.asText(), k.asText()) : null;
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * The cancel a {@code DELETE /api/v1/timers/{queue}/{timerKey}} means. {@code rawRest} is the path after the prefix,
     * still percent-encoded: the queue is its first segment, the timer key everything after the first '/', each
     * percent-decoded once as UTF-8. A key is opaque: {@code ..}, {@code %2F} and '/' are characters of the key as they
     * would be in a Kafka command's timerKey, never a path to walk.
     */
    static Command ofPath(String rawRest) throws Refusal {
        TimerPath p = timerPath(rawRest);
        String queue = p.queue();
        String timerKey = p.timerKey();
        ObjectNode n = LENIENT.createObjectNode();
        n.put(WireFormat.OP, Op.CANCEL.wireName());
        n.put(WireFormat.QUEUE, queue);
        n.put(WireFormat.TIMER_KEY, timerKey);
        try {
            return new Command(LENIENT.writeValueAsBytes(n), WireFormat.key(queue, timerKey));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The queue and key a {@code /api/v1/timers/{queue}/{timerKey}} path names (DELETE cancels it, GET peeks it). */
    record TimerPath(String queue, String timerKey) {}

    /** {@code rawRest}: the path after {@code /api/v1/timers/}, percent-encoded; split and decoded as {@link #ofPath} says. */
    static TimerPath timerPath(String rawRest) throws Refusal {
        int slash = rawRest.indexOf('/');
        if (slash <= 0 || slash == rawRest.length() - 1) {
            throw new Refusal(Problem.notFound("the path must be /api/v1/timers/{queue}/{timerKey}"));
        }
        return new TimerPath(decode(rawRest.substring(0, slash)), decode(rawRest.substring(slash + 1)));
    }

    /** RFC 3986 percent-decoding ('+' is a plus in a path), strict UTF-8: a malformed escape or byte sequence is a 400. */
    static String decode(String raw) throws Refusal {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                if (i + 2 >= raw.length()) {
                    throw new Refusal(Problem.badRequest("a truncated percent escape in the path"));
                }
                int hi = Character.digit(raw.charAt(i + 1), 16);
                int lo = Character.digit(raw.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw new Refusal(Problem.badRequest("a malformed percent escape in the path"));
                }
                bytes.write(hi * 16 + lo);
                i += 2;
            } else if (c > 0x7f) {
                throw new Refusal(Problem.badRequest("a raw non-ASCII character in the path: percent-encode it as UTF-8"));
            } else {
                bytes.write(c);
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
        } catch (CharacterCodingException e) {
            throw new Refusal(Problem.badRequest("the path is not UTF-8 once percent-decoded"));
        }
    }

    /** A request refused before any command was written. */
    static final class Refusal extends Exception {
        final Problem problem;

        Refusal(Problem problem) {
            super(problem.detail(), null, false, false);
            this.problem = problem;
        }
    }
}
