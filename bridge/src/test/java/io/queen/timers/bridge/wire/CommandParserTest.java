package io.queen.timers.bridge.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.command.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** Pure validation: no database, no broker. */
class CommandParserTest {

    static final long TS = Instant.parse("2026-12-02T12:00:00Z").toEpochMilli();
    final CommandParser parser = new CommandParser(new WireLimits(Duration.ofDays(90), 1024));

    @Test
    void envelopeScheduleWithDelayCountsFromRecordTimestamp() {
        Command c = (Command) parse("q.a/k-1", "{\"op\":\"schedule\",\"queue\":\"q.a\",\"timerKey\":\"k-1\",\"delayMs\":60000,"
                + "\"txn\":\"t1\",\"payload\":{ \"a\" : [1, 2] }}");
        assertThat(c.op()).isEqualTo(Op.SCHEDULE);
        assertThat(c.schedule().deliverAt()).isEqualTo(Instant.ofEpochMilli(TS + 60_000));
        assertThat(c.partition()).isEqualTo("Default");
        assertThat(new String(c.schedule().payload(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":[1,2]}");
    }

    @Test
    void encoderOutputParsesBack() {
        Instant at = Instant.parse("2026-12-03T00:00:00Z");
        Command c = (Command) parser.parse(WireFormat.keyBytes("q", "ü/ключ"), TimerCommand.reschedule("q", "ü/ключ").at(at).txn("tx").payload("null").envelope("commands").value(), null, TS);
        assertThat(c.op()).isEqualTo(Op.RESCHEDULE);
        assertThat(c.timerKey()).isEqualTo("ü/ключ");
        assertThat(c.schedule().deliverAt()).isEqualTo(at);
        Command cancel = (Command) parser.parse(WireFormat.keyBytes("q", "k"), TimerCommand.cancel("q", "k").envelope("commands").value(), null, TS);
        assertThat(cancel.op()).isEqualTo(Op.CANCEL);
    }

    @Test
    void headersFormCarriesTheRawPayloadAsValue() {
        RecordHeaders h = new RecordHeaders();
        h.add("queen-op", bytes("schedule")).add("queen-queue", bytes("q")).add("queen-timer-key", bytes("k"))
                .add("queen-deliver-at", bytes("2026-12-02T13:00:00+01:00")).add("queen-txn", bytes("t")).add("traceparent", bytes("x"));
        Command c = (Command) parser.parse(bytes("q/k"), bytes("[1, 2]"), h, TS);
        assertThat(c.schedule().deliverAt()).isEqualTo(Instant.parse("2026-12-02T12:00:00Z"));
        assertThat(new String(c.schedule().payload(), StandardCharsets.UTF_8)).isEqualTo("[1,2]");
    }

    @Test
    void eachDefectHasItsReason() {
        String ok = "\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"payload\":1";
        assertReason("q/k", "{\"op\":\"schedule\",", RejectReason.MALFORMED_JSON);
        assertReason("q/k", "[1]", RejectReason.MALFORMED_JSON);
        assertReason("q/k", "{\"op\":\"fire\"," + ok + ",\"delayMs\":1}", RejectReason.UNKNOWN_OP);
        assertReason("q/k", "{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"payload\":1}", RejectReason.MISSING_FIELD);
        assertReason("q/k", "{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"delayMs\":1}", RejectReason.MISSING_FIELD);
        assertReason("q/k", "{\"op\":\"schedule\"," + ok + ",\"delayMs\":\"1\"}", RejectReason.WRONG_TYPE);
        assertReason("q/k", "{\"op\":\"schedule\"," + ok + ",\"delayMs\":1,\"tenant_id\":\"x\"}", RejectReason.SERVER_OWNED_FIELD);
        assertReason("q/k", "{\"op\":\"schedule\"," + ok + ",\"delayMs\":1,\"messageId\":\"x\"}", RejectReason.SERVER_OWNED_FIELD);
        assertReason("q/k", "{\"op\":\"schedule\"," + ok + ",\"delay_ms\":1}", RejectReason.UNKNOWN_FIELD);
        assertReason("q/k", "{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\"}", RejectReason.UNKNOWN_FIELD);
        assertReason("q q/k", "{\"op\":\"cancel\",\"queue\":\"q q\",\"timerKey\":\"k\"}", RejectReason.BAD_QUEUE);
        assertReason("q/", "{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"\"}", RejectReason.BAD_TIMER_KEY);
        assertReason("q/a", "{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"a\\u0000\"}", RejectReason.BAD_TIMER_KEY);
        assertReason("q/a", "{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"\\ud800\"}", RejectReason.BAD_TIMER_KEY);
        assertReason("q/k", "{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"k\",\"partition\":\"\"}", RejectReason.BAD_PARTITION);
        assertReason("q/k", "{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"\",\"payload\":1,\"delayMs\":1}", RejectReason.BAD_TXN);
        assertReason("q/k", "{\"op\":\"schedule\"," + ok + ",\"delayMs\":1,\"deliverAt\":\"2026-12-02T12:00:00Z\"}", RejectReason.BAD_TIME);
        assertReason("q/k", "{\"op\":\"schedule\"," + ok + ",\"delayMs\":-1}", RejectReason.BAD_TIME);
        assertReason("q/k", "{\"op\":\"schedule\"," + ok + ",\"deliverAt\":\"2026-12-02T12:00:00\"}", RejectReason.BAD_TIME);
        assertReason("q/k", "{\"op\":\"schedule\"," + ok + ",\"delayMs\":" + Duration.ofDays(91).toMillis() + "}", RejectReason.HORIZON);
        assertReason("q/k", "{\"op\":\"schedule\"," + ok + ",\"deliverAt\":\"2027-12-02T12:00:00Z\"}", RejectReason.HORIZON);
        assertReason("q/k", "{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"delayMs\":1,\"payload\":\""
                + "x".repeat(2000) + "\"}", RejectReason.PAYLOAD_TOO_LARGE);
        assertReason("q/other", "{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"k\"}", RejectReason.KEY_MISMATCH);
        assertReason(null, "{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"k\"}", RejectReason.KEY_MISMATCH);
    }

    @Test
    void aMissingOrUnreadableKeyNamesTheExpectedKeyPrintably() {
        // a timer key with control characters (ESC, a C0 control): the detail that names the expected key escapes them,
        // as the key_mismatch detail of a readable key does (found by CommandParserPropertiesTest's mutations)
        String value = "{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"\\u001b[31mk\\u0012\"}";
        for (byte[] key : new byte[][] {null, {(byte) 0xC3, (byte) 0x28}}) {
            Parsed p = parser.parse(key, bytes(value), null, TS);
            assertThat(((Rejection) p).reason()).isEqualTo(RejectReason.KEY_MISMATCH);
            assertThat(((Rejection) p).detail()).contains("expected 'q/").doesNotContain("\u001b", "\u0012");
        }
    }

    @Test
    void aValueLongerThanAnyValidCommandIsTooLargeFromItsLengthAlone() {
        WireLimits limits = new WireLimits(Duration.ofDays(90), 1024);
        byte[] notEvenJson = new byte[limits.maxValueBytes() + 1];
        java.util.Arrays.fill(notEvenJson, (byte) '[');   // would be malformed_json (or a nesting-depth error) if it were read
        Parsed p = parser.parse(bytes("q/k"), notEvenJson, null, TS);
        assertThat(p).isInstanceOf(Rejection.class);
        assertThat(((Rejection) p).reason()).isEqualTo(RejectReason.PAYLOAD_TOO_LARGE);
        assertThat(((Rejection) p).detail()).contains(Integer.toString(limits.maxValueBytes()));
        assertThat(((Rejection) p).kafkaKey()).isEqualTo("q/k");
        // the longest value that can be valid is still read: the envelope's room is counted on top of the payload's
        String head = "{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"" + "t".repeat(1024)
                + "\",\"delayMs\":1,\"payload\":\"";
        String atLimit = head + "x".repeat(1022) + "\"}";
        assertThat(parse("q/k", atLimit)).isInstanceOf(Command.class);
    }

    @Test
    void pastDeliveryIsLegal() {
        assertThat(parse("q/k", "{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"payload\":1,"
                + "\"deliverAt\":\"2020-01-01T00:00:00Z\"}")).isInstanceOf(Command.class);
    }

    @Test
    void headersFormRejectsServerOwnedAndRepeatedHeaders() {
        RecordHeaders h = new RecordHeaders();
        h.add("queen-op", bytes("cancel")).add("queen-queue", bytes("q")).add("queen-timer-key", bytes("k")).add("queen-producer-sub", bytes("me"));
        assertThat(((Rejection) parser.parse(bytes("q/k"), null, h, TS)).reason()).isEqualTo(RejectReason.SERVER_OWNED_FIELD);
        RecordHeaders twice = new RecordHeaders();
        twice.add("queen-op", bytes("cancel")).add("queen-queue", bytes("q")).add("queen-timer-key", bytes("k")).add("queen-queue", bytes("q"));
        assertThat(((Rejection) parser.parse(bytes("q/k"), null, twice, TS)).reason()).isEqualTo(RejectReason.BAD_HEADER);
    }

    @Test
    void randomBytesAreMalformedNeverAnException() {
        java.util.Random r = new java.util.Random(7);
        for (int i = 0; i < 2000; i++) {
            byte[] v = new byte[r.nextInt(64)];
            r.nextBytes(v);
            byte[] k = new byte[r.nextInt(8)];
            r.nextBytes(k);
            assertThat(parser.parse(k, v, null, TS)).isInstanceOf(Rejection.class);
        }
    }

    /**
     * Issue 37 point 2: a rule's zone is an IANA region id, its cron text at most 256 characters, and its occurrences no
     * closer than recurring.min.period (period_too_short, in either form); at the floor (1 s) a 6-field cron passes.
     */
    @Test
    void recurringRulesAreBoundedByZoneTextAndPeriod() {
        CommandParser defaults = new CommandParser(WireLimits.DEFAULTS);
        String ok = "{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"payload\":1,";
        java.util.function.BiFunction<CommandParser, String, Parsed> send = (p, rule) -> p.parse(bytes("q/k"), bytes(ok + rule + "}"), null, TS);
        assertThat(send.apply(defaults, "\"cron\":\"0 * * * *\",\"zone\":\"+05:00\""))
                .isInstanceOfSatisfying(Rejection.class, r -> {
                    assertThat(r.reason()).isEqualTo(RejectReason.BAD_RULE);
                    assertThat(r.detail()).contains("IANA region id");
                });
        assertThat(send.apply(defaults, "\"cron\":\"0 * * * *\",\"zone\":\"Asia/Kolkata\"")).isInstanceOf(Command.class);
        assertThat(send.apply(defaults, "\"cron\":\"0 " + "1,".repeat(200) + "1 * * *\""))
                .isInstanceOfSatisfying(Rejection.class, r -> assertThat(r.reason()).isEqualTo(RejectReason.BAD_RULE));
        for (String rule : new String[] {"\"every\":\"PT1S\"", "\"every\":\"PT9.999S\"", "\"cron\":\"* * * * * *\"",
                "\"cron\":\"0,5 * * * * *\""}) {
            assertThat(send.apply(defaults, rule)).as(rule).isInstanceOfSatisfying(Rejection.class, r -> {
                assertThat(r.reason()).isEqualTo(RejectReason.PERIOD_TOO_SHORT);
                assertThat(r.detail()).contains("recurring.min.period");
            });
            assertThat(send.apply(new CommandParser(new WireLimits(Duration.ofDays(90), 1024, Duration.ofSeconds(1))), rule))
                    .as(rule).isInstanceOf(Command.class);
        }
        assertThat(send.apply(defaults, "\"every\":\"PT10S\"")).isInstanceOf(Command.class);
        assertThat(send.apply(defaults, "\"cron\":\"*/10 * * * * *\"")).isInstanceOf(Command.class);
        org.apache.kafka.common.header.internals.RecordHeaders h = new org.apache.kafka.common.header.internals.RecordHeaders();
        for (String[] kv : new String[][] {{"queen-op", "schedule"}, {"queen-queue", "q"}, {"queen-timer-key", "k"}, {"queen-txn", "t"},
                {"queen-every", "PT2S"}}) {
            h.add(kv[0], bytes(kv[1]));
        }
        assertThat(defaults.parse(bytes("q/k"), bytes("1"), h, TS))
                .isInstanceOfSatisfying(Rejection.class, r -> assertThat(r.reason()).isEqualTo(RejectReason.PERIOD_TOO_SHORT));
    }

    private Parsed parse(String key, String value) {
        return parser.parse(key == null ? null : bytes(key), bytes(value), null, TS);
    }

    private void assertReason(String key, String value, RejectReason reason) {
        Parsed p = parse(key, value);
        assertThat(p).as(value).isInstanceOf(Rejection.class);
        assertThat(((Rejection) p).reason()).as(value + " -> " + ((Rejection) p).detail()).isEqualTo(reason);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
