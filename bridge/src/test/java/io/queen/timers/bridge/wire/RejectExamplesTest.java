package io.queen.timers.bridge.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.client.command.RejectReason;
import io.queen.timers.testkit.WireSchemas;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** docs/commands.md#reject-reasons-closed-list: each example record is rejected with its reason, and the schemas refuse what they can judge. */
class RejectExamplesTest {

    /** Decided by a database error or by topic and queue settings, not by the record: no example. */
    static final Set<RejectReason> NOT_BY_THE_RECORD = EnumSet.of(RejectReason.INTERNAL, RejectReason.UNAUTHENTICATED,
            RejectReason.FORBIDDEN, RejectReason.ENCRYPTION_UNAVAILABLE, RejectReason.TENANT_QUOTA, RejectReason.NOT_OWNER,
            RejectReason.UNREADABLE_RECORD, RejectReason.RECURRING_QUOTA);
    /** What a schema cannot say: the horizon, the payload size and the shortest period are settings. */
    static final Set<RejectReason> BEYOND_THE_SCHEMAS = EnumSet.of(RejectReason.HORIZON, RejectReason.PAYLOAD_TOO_LARGE,
            RejectReason.NO_OCCURRENCE, RejectReason.PERIOD_TOO_SHORT);   // a schema cannot run a cron rule

    record Example(RejectReason reason, byte[] key, RecordHeaders headers, byte[] value, String line) {}

    @Test
    void eachExampleIsRejectedWithItsReason() throws Exception {
        List<Example> examples = examples();
        assertThat(examples).extracting(Example::reason).doesNotHaveDuplicates()
                .containsExactlyInAnyOrderElementsOf(EnumSet.complementOf(EnumSet.copyOf(NOT_BY_THE_RECORD)));
        CommandParser parser = new CommandParser(WireLimits.DEFAULTS);
        long now = Instant.now().toEpochMilli();
        for (Example e : examples) {
            Parsed p = parser.parse(e.key(), e.value(), e.headers(), now);
            assertThat(p).as(e.line()).isInstanceOfSatisfying(Rejection.class, r -> assertThat(r.reason()).as(e.line()).isEqualTo(e.reason()));
            List<String> schemaErrors = WireSchemas.commandErrors(new ProducerRecord<>("commands", null, e.key(), e.value(), e.headers()));
            if (BEYOND_THE_SCHEMAS.contains(e.reason())) {
                assertThat(schemaErrors).as("schemas on " + e.line()).isEmpty();
            } else {
                assertThat(schemaErrors).as("schemas on " + e.line()).isNotEmpty();
            }
        }
    }

    static List<Example> examples() throws Exception {
        String readme = Files.readString(Path.of("../docs/commands.md"), StandardCharsets.UTF_8);
        Matcher block = Pattern.compile("An example record of each reason.*?```text\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertThat(block.find()).as("the reject examples block of docs/commands.md").isTrue();
        List<Example> out = new ArrayList<>();
        for (String line : block.group(1).split("\n")) {
            String[] f = line.trim().split(" +", 4);
            RejectReason reason = RejectReason.fromWire(f[0]).orElseThrow(() -> new AssertionError("not a reason: " + line));
            RecordHeaders headers = new RecordHeaders();
            if (!f[2].equals("-")) {
                for (String h : f[2].split(";")) {
                    String[] nv = h.split("=", 2);
                    headers.add(nv[0], bytes(nv[1]));
                }
            }
            out.add(new Example(reason, f[1].equals("-") ? null : bytes(f[1]), headers, f[3].equals("-") ? null : bytes(f[3]), line));
        }
        return out;
    }

    /** UTF-8 of {@code text} with each «n×c» expanded to c repeated n times. */
    static byte[] bytes(String text) {
        Matcher m = Pattern.compile("«(\\d+)×(.)»").matcher(text);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(b, Matcher.quoteReplacement(m.group(2).repeat(Integer.parseInt(m.group(1)))));
        }
        m.appendTail(b);
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }
}
