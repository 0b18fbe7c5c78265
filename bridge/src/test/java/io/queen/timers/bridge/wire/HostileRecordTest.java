package io.queen.timers.bridge.wire;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.client.command.TimerCommand;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** Records at the edges of time arithmetic and JSON: one verdict each, never an exception; payloads exactly as sent. */
class HostileRecordTest {

    static final long TS = Instant.parse("2026-12-02T12:00:00Z").toEpochMilli();
    final CommandParser parser = new CommandParser(new WireLimits(Duration.ofDays(90), 1 << 20));

    @Test
    void farFutureAndPastDeliverAtAreBadTimeWhateverTheTimestamp() {
        for (String at : new String[] {"+300000000-01-01T00:00:00Z", "+999999999-12-31T23:59:59.999999999-18:00",
                "-999999999-01-01T00:00:00+18:00", "+10000-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z", "0000-01-01T00:00:00Z"}) {
            for (long ts : new long[] {TS, -1, 0, Long.MAX_VALUE}) {
                assertThat(reason(scheduleAt(at), ts)).as("%s at timestamp %d", at, ts).isEqualTo(RejectReason.BAD_TIME);
            }
        }
    }

    @Test
    void oddOffsetsParseOrAreBadTime() {
        assertThat(((Command) parse(scheduleAt("2026-12-02T12:00:00+18:00"), TS)).schedule().deliverAt()).isEqualTo(Instant.parse("2026-12-01T18:00:00Z"));
        assertThat(((Command) parse(scheduleAt("2026-12-02T12:00:00-18:00"), TS)).schedule().deliverAt()).isEqualTo(Instant.parse("2026-12-03T06:00:00Z"));
        assertThat(((Command) parse(scheduleAt("2026-12-02T12:00:00.123456789+05:45"), TS)).schedule().deliverAt())
                .isEqualTo(Instant.parse("2026-12-02T06:15:00.123456789Z"));
        for (String at : new String[] {"2026-12-02T12:00:00+19:00", "2026-12-02T12:00:00+24:00", "2026-12-02T12:00:00", "2026-02-30T00:00:00Z",
                "2026-12-02T25:00:00Z", "2026-12-02T12:00:00+01:00[Europe/Paris]", "", "now"}) {
            assertThat(reason(scheduleAt(at), TS)).as(at).isEqualTo(RejectReason.BAD_TIME);
        }
    }

    @Test
    void deliverAtWithoutATimestampIsBoundedBy9999() {
        assertThat(((Command) parse(scheduleAt("9999-12-31T23:59:59.999Z"), -1)).schedule().deliverAt()).isEqualTo(CommandParser.LATEST);
        assertThat(reason(scheduleAt("9999-12-31T23:59:59.999Z"), TS)).isEqualTo(RejectReason.HORIZON);
    }

    @Test
    void delayMsAtAndBeyondTheLongRange() {
        for (String d : new String[] {"9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e400",
                "99999999999999999999999999999999999999", "1.5", "1e3", "60000.0", "-1", "-0.0"}) {
            RejectReason r = reason(schedule("\"delayMs\":" + d), TS);
            assertThat(r).as(d).isIn(RejectReason.BAD_TIME, RejectReason.HORIZON);
        }
        assertThat(((Command) parse(bytes(schedule("\"delayMs\":-0")), TS)).schedule().deliverAt()).isEqualTo(Instant.ofEpochMilli(TS));
        assertThat(reason(schedule("\"delayMs\":1000"), Long.MAX_VALUE)).isEqualTo(RejectReason.BAD_TIME);
        assertThat(reason(schedule("\"delayMs\":1000"), Long.MAX_VALUE - 10)).isEqualTo(RejectReason.BAD_TIME);
        assertThat(reason(schedule("\"delayMs\":1000"), -1)).isEqualTo(RejectReason.BAD_TIME);
        RecordHeaders h = headers("999999999999999999");
        assertThat(parser.parse(bytes("q/k"), bytes("1"), h, TS)).isInstanceOf(Rejection.class);
        assertThat(((Rejection) parser.parse(bytes("q/k"), bytes("1"), headers("1000"), Long.MAX_VALUE)).reason()).isEqualTo(RejectReason.BAD_TIME);
    }

    @Test
    void payloadIsTheProducersJsonExactlyWithoutInsignificantWhitespace() throws Exception {
        String[] payloads = {
            "0.12345678901234567890123", "1e400", "-1E-400", "2.5e-324", "123456789012345678901234567890123456789",
            "-0", "1.0", "1E+2", "[1.10, 2.000, 3e0]", "\"\\u00e9\\n\\t\\\"\\\\\\/\\ud83d\\ude00 é\"",
            "{\"z\":1,\"a\":{\"y\":[],\"b\":{}},\"m\":null}", "{ \"k\" : \" keep  inner  spaces \" ,\n\t\"n\" : [ 1 , 2 ] }",
            "\"\\ud800\"", "true", "null"};
        String[] expected = {
            "0.12345678901234567890123", "1e400", "-1E-400", "2.5e-324", "123456789012345678901234567890123456789",
            "-0", "1.0", "1E+2", "[1.10,2.000,3e0]", "\"\\u00e9\\n\\t\\\"\\\\\\/\\ud83d\\ude00 é\"",
            "{\"z\":1,\"a\":{\"y\":[],\"b\":{}},\"m\":null}", "{\"k\":\" keep  inner  spaces \",\"n\":[1,2]}",
            "\"\\ud800\"", "true", "null"};
        ObjectMapper json = new ObjectMapper();
        for (int i = 0; i < payloads.length; i++) {
            String envelope = "{ \"op\" : \"schedule\", \"payload\" : " + payloads[i] + " , \"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"delayMs\":1}";
            Command c = (Command) parse(bytes(envelope), TS);
            assertThat(new String(c.schedule().payload(), StandardCharsets.UTF_8)).as("envelope %s", payloads[i]).isEqualTo(expected[i]);
            Command h = (Command) parser.parse(bytes("q/k"), bytes("\uFEFF \n" + payloads[i] + " \r\n"), headers("1"), TS);
            assertThat(new String(h.schedule().payload(), StandardCharsets.UTF_8)).as("headers %s", payloads[i]).isEqualTo(expected[i]);
            Command sent = (Command) parser.parse(bytes("q/k"), TimerCommand.schedule("q", "k").delay(Duration.ofSeconds(1)).txn("t").payload(payloads[i]).envelope("commands").value(), null, TS);
            assertThat(new String(sent.schedule().payload(), StandardCharsets.UTF_8)).as("TimerCommand %s", payloads[i]).isEqualTo(expected[i]);
            json.readTree(c.schedule().payload()); // still one JSON value
        }
    }

    @Test
    void payloadThatIsNotStrictUtf8IsMalformed() {
        byte[] utf16 = "{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"delayMs\":1,\"payload\":1}".getBytes(StandardCharsets.UTF_16BE);
        assertThat(reason(utf16, TS)).isEqualTo(RejectReason.MALFORMED_JSON);
        byte[] cesu = {'"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"'}; // a surrogate encoded as UTF-8: not UTF-8
        assertThat(((Rejection) parser.parse(bytes("q/k"), cesu, headers("1"), TS)).reason()).isEqualTo(RejectReason.MALFORMED_JSON);
    }

    @Test
    void deepNestingAndHugeNumbersAreRejectedNotThrown() {
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        assertThat(reason("{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"delayMs\":1,\"payload\":" + deep + "}", TS)).isEqualTo(RejectReason.MALFORMED_JSON);
        assertThat(((Rejection) parser.parse(bytes("q/k"), bytes(deep), headers("1"), TS)).reason()).isEqualTo(RejectReason.MALFORMED_JSON);
    }

    private RejectReason reason(byte[] value, long ts) {
        Parsed p = parse(value, ts);
        assertThat(p).as(new String(value, StandardCharsets.UTF_8)).isInstanceOf(Rejection.class);
        Rejection r = (Rejection) p;
        assertThat(r.reason()).as(r.detail()).isNotEqualTo(RejectReason.INTERNAL);
        return r.reason();
    }

    private RejectReason reason(String value, long ts) {
        return reason(bytes(value), ts);
    }

    private Parsed parse(byte[] value, long ts) {
        return parser.parseChecked(bytes("q/k"), value, null, ts);
    }

    private static byte[] scheduleAt(String at) {
        return bytes("{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"payload\":1,\"deliverAt\":\"" + at + "\"}");
    }

    private static String schedule(String time) {
        return "{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"payload\":1," + time + "}";
    }

    private static RecordHeaders headers(String delayMs) {
        RecordHeaders h = new RecordHeaders();
        h.add("queen-op", bytes("schedule")).add("queen-queue", bytes("q")).add("queen-timer-key", bytes("k"))
                .add("queen-delay-ms", bytes(delayMs)).add("queen-txn", bytes("t"));
        return h;
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
