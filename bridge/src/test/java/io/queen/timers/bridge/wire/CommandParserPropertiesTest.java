package io.queen.timers.bridge.wire;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.testkit.HostileRecords;
import io.queen.timers.testkit.HostileRecords.HostileRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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
            assertThat(c.deliverAt()).as(what).isBetween(java.time.Instant.EPOCH, CommandParser.LATEST);
            assertThat(CommandParser.validText(c.txn(), 1024)).as(what).isTrue();
            try {
                JSON.readTree(c.payload());
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
