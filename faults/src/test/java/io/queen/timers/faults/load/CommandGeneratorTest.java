package io.queen.timers.faults.load;

import static org.assertj.core.api.Assertions.assertThat;

import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.bridge.wire.Command;
import io.queen.timers.bridge.wire.CommandParser;
import io.queen.timers.bridge.wire.Parsed;
import io.queen.timers.bridge.wire.Rejection;
import io.queen.timers.bridge.wire.WireLimits;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.core.recur.Recurrence;
import io.queen.timers.faults.load.CommandGenerator;
import io.queen.timers.faults.load.CommandKind;
import io.queen.timers.faults.load.GeneratedCommand;
import io.queen.timers.faults.load.Intent;
import io.queen.timers.faults.load.Series;
import io.queen.timers.processes.stack.Stack;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;

/**
 * The generator's intent agrees with the bridge's rules: every record it calls hostile is a rejection
 * by the bridge's own parser (with the harness's settings), every valid or poisoned one a command. The
 * checker relies on that split; a generator drifting from the wire rules would report the harness.
 */
class CommandGeneratorTest {

    private final CommandParser parser = new CommandParser(new WireLimits(Duration.ofDays(90), Stack.PAYLOAD_MAX_BYTES));

    @Test
    void hostileRecordsAreRejectedAndTheOthersAreCommands() {
        CommandGenerator g = new CommandGenerator(42, 50, 0.3, 0.05, 0.01);
        Map<CommandKind, Integer> seen = new EnumMap<>(CommandKind.class);
        Set<String> reasons = new HashSet<>();
        for (int seq = 0; seq < 3_000; seq++) {
            GeneratedCommand c = g.next(seq);
            ProducerRecord<byte[], byte[]> r = c.record();
            Parsed parsed = parser.parse(r.key(), r.value(), r.headers(), System.currentTimeMillis());
            seen.merge(c.kind(), 1, Integer::sum);
            if (c.kind() == CommandKind.HOSTILE) {
                assertThat(parsed).as("seq %d is hostile: %s", seq, r).isInstanceOf(Rejection.class);
                reasons.add(((Rejection) parsed).reason().wireName());
            } else {
                assertThat(parsed).as("seq %d is %s: %s", seq, c.kind(), parsed).isInstanceOf(Command.class);
            }
        }
        assertThat(seen).containsKeys(CommandKind.VALID, CommandKind.HOSTILE, CommandKind.POISON);
        assertThat(reasons).as("reject reasons the hostile records reach").hasSizeGreaterThanOrEqualTo(12);
    }

    @Test
    void theSameSeedGivesTheSameRecords() {
        CommandGenerator a = new CommandGenerator(7, 20, 0.03, 0.005, 0.003);
        CommandGenerator b = new CommandGenerator(7, 20, 0.03, 0.005, 0.003);
        for (int seq = 0; seq < 500; seq++) {
            ProducerRecord<byte[], byte[]> ra = a.next(seq).record();
            ProducerRecord<byte[], byte[]> rb = b.next(seq).record();
            assertThat(rb.topic()).isEqualTo(ra.topic());
            assertThat(rb.key()).isEqualTo(ra.key());
            if (!new String(ra.value() == null ? new byte[0] : ra.value()).contains("deliverAt")) {
                assertThat(rb.value()).isEqualTo(ra.value());
            }
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final CronParser SPRING = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING));

    /**
     * The oracle's occurrences of every series, read back from the record the bridge gets (either form), are the rule's
     * by cron-utils itself and by the product's Recurrence: the harness's arithmetic cannot drift from either unseen.
     * Clocks across minute boundaries and both of Berlin's 2026 daylight-saving transitions.
     */
    @Test
    void aSeriesOccurrencesAreItsRulesByCronUtilsAndByRecurrence() throws Exception {
        Instant[] bases = {Instant.parse("2026-12-03T10:00:00Z"), Instant.parse("2026-03-29T00:59:40Z"), Instant.parse("2026-10-25T00:59:40Z")};
        Set<String> shapes = new HashSet<>();
        for (Instant base : bases) {
            long[] step = {0};
            CommandGenerator g = new CommandGenerator(20261203, 50, 0.03, 0.005, 0.003, 1.0)
                    .clock(() -> base.plusMillis(step[0] * 337));
            for (int seq = 0; seq < 300; seq++) {
                step[0] = seq;
                GeneratedCommand c = g.next(seq);
                Series s = c.intent().series();
                assertThat(s).as("seq %d with recurring fraction 1", seq).isNotNull();
                Rule rule = Rule.of(c.record());
                String at = "seq " + seq + " " + rule;
                assertThat(rule.txn()).isEqualTo(s.txn());
                assertThat(rule.catchUp()).as(at).isEqualTo(s.catchUp()).isIn("all", "one", "none");
                assertThat(s.occurrences()).as(at).hasSizeBetween(3, 20);
                assertThat(s.occurrences()).as(at + " by Recurrence").isEqualTo(byRecurrence(rule));
                if (rule.cron() != null) {
                    assertThat(s.occurrences()).as(at + " by cron-utils").isEqualTo(byCronUtils(rule));
                }
                shapes.add((rule.cron() != null ? "cron" : "every") + (rule.endAt() != null ? " endAt" : " max") + (rule.headers() ? " headers" : " json"));
                if (rule.endAt() != null && rule.endAt().equals(s.occurrences().get(s.occurrences().size() - 1))) {
                    shapes.add("endAt on the last occurrence");
                }
                if (rule.startAt().equals(s.occurrences().get(0))) {
                    shapes.add("startAt on the first occurrence");
                }
            }
        }
        assertThat(shapes).hasSize(10);
    }

    /** The bridge reads each series record as the oracle means it: first occurrence O1, staged as {@code <txn>@O1}, the series' payload. */
    @Test
    void seriesRecordsAreCommandsOfTheOraclesFirstOccurrence() throws Exception {
        Instant now = Instant.now();
        CommandGenerator g = new CommandGenerator(20261203, 50, 0.03, 0.005, 0.003, 1.0).clock(() -> now);
        for (int seq = 0; seq < 500; seq++) {
            GeneratedCommand c = g.next(seq);
            Series s = c.intent().series();
            ProducerRecord<byte[], byte[]> r = c.record();
            Parsed parsed = parser.parse(r.key(), r.value(), r.headers(), now.toEpochMilli());
            assertThat(parsed).as("seq %d: %s", seq, parsed).isInstanceOf(Command.class);
            Command cmd = (Command) parsed;
            assertThat(cmd.recurrence()).as("seq %d", seq).isNotNull();
            assertThat(cmd.schedule().deliverAt()).as("seq %d %s", seq, s.rule()).isEqualTo(s.occurrences().get(0));
            assertThat(cmd.schedule().txn()).isEqualTo(WireFormat.occurrenceTxn(s.txn(), s.occurrences().get(0)));
            assertThat(cmd.partition()).isEqualTo(c.intent().partition());
            assertThat(Intent.payloadHash(JSON.readTree(cmd.schedule().payload()))).isEqualTo(c.intent().payloadHash());
        }
    }

    @Test
    void seriesLeaveTheOneShotCommandsOfASeedAsTheyWere() {
        Instant now = Instant.parse("2026-12-03T10:00:00Z");
        CommandGenerator plain = new CommandGenerator(7, 20, 0.03, 0.005, 0.003).clock(() -> now);
        CommandGenerator mixed = new CommandGenerator(7, 20, 0.03, 0.005, 0.003, 0.05).clock(() -> now);
        int series = 0;
        for (int seq = 0; seq < 2_000; seq++) {
            GeneratedCommand a = plain.next(seq);
            GeneratedCommand b = mixed.next(seq);
            if (b.intent().recurring() || b.intent().key().startsWith(CommandGenerator.SERIES_KEY_PREFIX)) {
                // a series, or a later cancel or reschedule of one (it takes a one-shot command's place)
                series += b.intent().recurring() && "schedule".equals(b.intent().op()) ? 1 : 0;
                continue;
            }
            assertThat(b.intent()).isEqualTo(a.intent());
            assertThat(b.record().value()).isEqualTo(a.record().value());
        }
        assertThat(series).isBetween(60, 140);
    }

    /** A series' rule as its record carries it, in either form. */
    private record Rule(String cron, String zone, String every, Instant startAt, Instant endAt, Long max, String catchUp, String txn,
                        boolean headers) {
        static Rule of(ProducerRecord<byte[], byte[]> r) throws Exception {
            if (r.headers().lastHeader(WireFormat.H_OP) != null) {
                return new Rule(h(r, WireFormat.H_CRON), h(r, WireFormat.H_ZONE), h(r, WireFormat.H_EVERY), time(h(r, WireFormat.H_START_AT)),
                        time(h(r, WireFormat.H_END_AT)), h(r, WireFormat.H_MAX_OCCURRENCES) == null ? null : Long.valueOf(h(r, WireFormat.H_MAX_OCCURRENCES)),
                        h(r, WireFormat.H_CATCH_UP), h(r, WireFormat.H_TXN), true);
            }
            JsonNode j = JSON.readTree(r.value());
            return new Rule(j.path(WireFormat.CRON).asText(null), j.path(WireFormat.ZONE).asText(null), j.path(WireFormat.EVERY).asText(null),
                    time(j.path(WireFormat.START_AT).asText(null)), time(j.path(WireFormat.END_AT).asText(null)),
                    j.has(WireFormat.MAX_OCCURRENCES) ? j.get(WireFormat.MAX_OCCURRENCES).longValue() : null,
                    j.path(WireFormat.CATCH_UP).asText(null), j.path(WireFormat.TXN).asText(null), false);
        }

        private static String h(ProducerRecord<byte[], byte[]> r, String name) {
            Header h = r.headers().lastHeader(name);
            return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
        }

        private static Instant time(String text) {
            return text == null ? null : OffsetDateTime.parse(text).toInstant();
        }
    }

    private static List<Instant> byRecurrence(Rule r) {
        Recurrence rec = Recurrence.of(new Recurrence.Spec(r.cron(), r.zone(), r.every(), r.startAt().toString(),
                r.endAt() == null ? null : r.endAt().toString(), r.max(), r.catchUp()), r.txn(), r.startAt());
        List<Instant> out = new ArrayList<>();
        for (Instant o = rec.first().orElse(null); o != null && (r.max() == null || out.size() < r.max()); o = rec.after(o).orElse(null)) {
            out.add(o);
            if (out.size() > 100) {
                throw new AssertionError("more than 100 occurrences: " + r);
            }
        }
        return out;
    }

    /** cron-utils alone: the first second at or after startAt the expression names in the zone, then each next execution. */
    private static List<Instant> byCronUtils(Rule r) {
        ExecutionTime et = ExecutionTime.forCron(SPRING.parse(r.cron()));
        ZoneId zone = ZoneId.of(r.zone());
        ZonedDateTime z = ZonedDateTime.ofInstant(r.startAt(), zone);
        ZonedDateTime first = z.getNano() == 0 && et.isMatch(z) ? z : et.nextExecution(z).orElseThrow();
        List<Instant> out = new ArrayList<>();
        for (ZonedDateTime o = first; (r.max() == null || out.size() < r.max()) && (r.endAt() == null || !o.toInstant().isAfter(r.endAt()));
             o = et.nextExecution(o).orElseThrow()) {
            out.add(o.toInstant());
        }
        return out;
    }
}
