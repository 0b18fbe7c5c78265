package io.queen.timers.bridge.wire;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.testkit.HostileRecords.HostileRecord;
import io.queen.timers.testkit.HostileRecords;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.StringLength;

/**
 * Whatever the record, the parser answers a command or a rejection from the closed list, never an
 * exception and never {@code internal} (which is the last net for bugs, so here it counts as one).
 * A command it accepts is safe for everything after it: its key matches, its time is inside
 * 1970..9999 (epoch millis cannot overflow), its texts fit PostgreSQL, its payload is one JSON value.
 */
class CommandParserPropertiesTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final CommandParser parser = new CommandParser(new WireLimits(Duration.ofDays(90), 64 * 1024));

    @Property(tries = 3000)
    void mutatedCommandsGetACommandOrARejectionNeverAnException(@ForAll long seed) {
        HostileRecord rec = HostileRecords.next(new Random(seed), "fuzz.q");
        Parsed p = parser.parseChecked(rec.key(), rec.value(), rec.headers(), rec.timestampMs());
        assertSound(p, rec.key(), HostileRecords.describe(rec));
    }

    @Property(tries = 1000)
    void anyTextInAnyFieldIsJudged(@ForAll("fieldName") String field, @ForAll @StringLength(max = 80) String text,
                                   @ForAll("keys") String key, @ForAll boolean asString) {
        String raw = asString ? quoteAll(text) : text; // unquoted: random text where a JSON value belongs
        String value = "{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"delayMs\":5,\"payload\":1,\""
                + field + "\":" + raw + "}";
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        assertSound(parser.parseChecked(k, value.getBytes(StandardCharsets.UTF_8), null, 1_000L), k, value);
    }

    /** jqwik's own generators (so a failure shrinks to a small record): every field valid, swapped, edge, absent or doubled. */
    @Property(tries = 1500)
    void structuredEnvelopesWithMutatedFieldsAreJudged(@ForAll("envelopes") String envelope, @ForAll("keys") String key,
                                                       @ForAll("timestamps") long timestamp) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        assertSound(parser.parseChecked(k, envelope.getBytes(StandardCharsets.UTF_8), null, timestamp), k, envelope);
        assertSound(parser.parseChecked(bytes("q/k"), envelope.getBytes(StandardCharsets.UTF_8), null, timestamp), bytes("q/k"), envelope);
    }

    @Provide
    Arbitrary<String> envelopes() {
        Arbitrary<String> op = field("op", Arbitraries.of("\"schedule\"", "\"reschedule\"", "\"cancel\"", "\"Cancel\""));
        Arbitrary<String> queue = field("queue", Arbitraries.of("\"q\"", "\"q.a-b_c\"", "\"\"", "\"bad/q\""));
        Arbitrary<String> timerKey = field("timerKey", Arbitraries.of("\"k\""));
        Arbitrary<String> partition = field("partition", Arbitraries.of("\"Default\"", "\"p-1\""));
        Arbitrary<String> delay = field("delayMs", Arbitraries.oneOf(Arbitraries.longs().map(l -> Long.toString(l)),
                Arbitraries.of("0", "-0", "1e3", "1.5", "9223372036854775808", "1e400", "-1", "7776000000", "7776000001")));
        Arbitrary<String> at = field("deliverAt", Arbitraries.oneOf(
                Arbitraries.integers().between(-5, 400_000_000).map(y -> "\"" + (y > 9999 ? "+" + y : String.format("%04d", Math.abs(y)))
                        + "-01-01T00:00:00Z\""),
                Arbitraries.integers().between(-20, 20).map(h -> "\"2026-12-02T12:00:00" + (h < 0 ? "-" : "+")
                        + String.format("%02d", Math.abs(h)) + ":00\"")));
        Arbitrary<String> txn = field("txn", Arbitraries.of("\"t\"", "\"\""));
        Arbitrary<String> payload = field("payload", Arbitraries.of("1", "null", "{\"a\":[1,{\"b\":0.1e-999}]}", "\"\\ud800\"",
                "[" .repeat(600) + "]".repeat(600), "{\"a\":1,\"a\":2}", "01", "1e400", "\"x\""));
        Arbitrary<String> extra = Arbitraries.oneOf(Arbitraries.just(""),
                Arbitraries.of("tenantId", "claim_token", "unknown", "op", "payload").map(n -> "\"" + n + "\":1"));
        return net.jqwik.api.Combinators.combine(List.of(op, queue, timerKey, partition, delay, at, txn, payload, extra))
                .as(parts -> "{" + String.join(",", parts.stream().filter(p -> !p.isEmpty()).toList()) + "}");
    }

    /** One field: its valid values, a value of another type or text with anything in it, absent, or given twice. */
    private static Arbitrary<String> field(String name, Arbitrary<String> values) {
        Arbitrary<String> swapped = Arbitraries.oneOf(Arbitraries.of("true", "null", "[]", "{}", "1", "-1.0e-5", "\"1\""),
                Arbitraries.strings().ofMaxLength(20).map(CommandParserPropertiesTest::quoteAll));
        Arbitrary<String> value = Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(6, values), net.jqwik.api.Tuple.of(2, swapped));
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(8, value.map(v -> "\"" + name + "\":" + v)),
                net.jqwik.api.Tuple.of(1, Arbitraries.just("")),
                net.jqwik.api.Tuple.of(1, value.map(v -> "\"" + name + "\":" + v + ",\"" + name + "\":" + v)));
    }

    @Provide
    Arbitrary<Long> timestamps() {
        return Arbitraries.oneOf(Arbitraries.of(-1L, 0L, Long.MAX_VALUE, 1_796_212_800_000L), Arbitraries.longs());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Provide
    Arbitrary<String> fieldName() {
        return Arbitraries.of("op", "queue", "timerKey", "partition", "delayMs", "deliverAt", "txn", "payload", "tenant", "x");
    }

    @Provide
    Arbitrary<String> keys() {
        return Arbitraries.oneOf(Arbitraries.just("q/k"), Arbitraries.strings().ofMaxLength(10));
    }

    private static void assertSound(Parsed p, byte[] key, String what) {
        assertThat(p).as(what).isNotNull();
        if (p instanceof Rejection r) {
            assertThat(r.reason()).as("%s: %s", what, r.detail()).isNotEqualTo(RejectReason.INTERNAL);
            assertThat(r.detail()).as(what).isNotBlank().doesNotContain("\n", "\r", "\u001b", "\u0000");
            return;
        }
        Command c = (Command) p;
        assertThat(new String(key, StandardCharsets.UTF_8)).as(what).isEqualTo(c.kafkaKey());
        assertThat(CommandParser.validText(c.timerKey(), 512)).as(what).isTrue();
        assertThat(CommandParser.validText(c.partition(), 255)).as(what).isTrue();
        if (c.op() != Op.CANCEL) {
            assertThat(c.schedule().deliverAt()).as(what).isBetween(java.time.Instant.EPOCH, CommandParser.LATEST);
            assertThat(CommandParser.validText(c.schedule().txn(), 1024)).as(what).isTrue();
            try {
                JSON.readTree(c.schedule().payload());
            } catch (java.io.IOException e) {
                throw new AssertionError(what + ": payload is not JSON: " + e.getMessage(), e);
            }
        }
    }

    private static String quoteAll(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            b.append(c == '"' || c == '\\' || c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return b.append('"').toString();
    }
}
