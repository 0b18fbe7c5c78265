package io.queen.timers.client.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;

/** The rule of a recurring timer (docs/commands.md#recurring-timers) written in both forms, and the shapes the builder refuses. */
class TimerCommandRecurrenceTest {

    static final Instant START = Instant.parse("2026-03-01T00:00:00Z");
    static final Instant END = Instant.parse("2026-04-01T00:00:00Z");

    static TimerCommand nightly() {
        return TimerCommand.schedule("reports", "nightly").cron("30 2 * * *", ZoneId.of("Europe/Berlin")).startAt(START).endAt(END)
                .maxOccurrences(5).catchUp(CatchUp.NONE).txn("nightly").payload("{\"r\":1}");
    }

    static Map<String, String> headers(ProducerRecord<byte[], byte[]> r) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Header h : r.headers()) {
            assertThat(out.put(h.key(), new String(h.value(), StandardCharsets.UTF_8))).as("header %s once", h.key()).isNull();
        }
        return out;
    }

    @Test
    void aCronRuleIsWrittenInTheEnvelope() throws Exception {
        JsonNode n = new ObjectMapper().readTree(nightly().envelope("cmds").value());
        assertThat(n.get(WireFormat.CRON).textValue()).isEqualTo("30 2 * * *");
        assertThat(n.get(WireFormat.ZONE).textValue()).isEqualTo("Europe/Berlin");
        assertThat(n.get(WireFormat.START_AT).textValue()).isEqualTo("2026-03-01T00:00:00Z");
        assertThat(n.get(WireFormat.END_AT).textValue()).isEqualTo("2026-04-01T00:00:00Z");
        assertThat(n.get(WireFormat.MAX_OCCURRENCES).isInt()).as("maxOccurrences is a JSON integer").isTrue();
        assertThat(n.get(WireFormat.MAX_OCCURRENCES).intValue()).isEqualTo(5);
        assertThat(n.get(WireFormat.CATCH_UP).textValue()).isEqualTo("none");
        assertThat(n.has(WireFormat.EVERY) || n.has(WireFormat.DELAY_MS) || n.has(WireFormat.DELIVER_AT)).isFalse();
    }

    @Test
    void aCronRuleIsWrittenInTheHeaders() {
        ProducerRecord<byte[], byte[]> r = nightly().headers("cmds");
        assertThat(headers(r)).containsEntry(WireFormat.H_CRON, "30 2 * * *").containsEntry(WireFormat.H_ZONE, "Europe/Berlin")
                .containsEntry(WireFormat.H_START_AT, "2026-03-01T00:00:00Z").containsEntry(WireFormat.H_END_AT, "2026-04-01T00:00:00Z")
                .containsEntry(WireFormat.H_MAX_OCCURRENCES, "5").containsEntry(WireFormat.H_CATCH_UP, "none")
                .doesNotContainKeys(WireFormat.H_EVERY, WireFormat.H_DELAY_MS, WireFormat.H_DELIVER_AT);
        assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("{\"r\":1}");
    }

    @Test
    void everyIsAnIso8601DurationAndACronWithoutZoneSendsNone() throws Exception {
        TimerCommand c = TimerCommand.schedule("q", "k").every(Duration.ofMinutes(90)).txn("t").payload("null");
        assertThat(new ObjectMapper().readTree(c.envelope("cmds").value()).get(WireFormat.EVERY).textValue()).isEqualTo("PT1H30M");
        assertThat(headers(c.headers("cmds"))).containsEntry(WireFormat.H_EVERY, "PT1H30M").doesNotContainKeys(WireFormat.H_CRON);

        // UTC is the bridge's default: a cron without a zone sends none rather than a second spelling of it
        JsonNode utc = new ObjectMapper().readTree(TimerCommand.schedule("q", "k").cron("0 * * * *").txn("t").payload("null")
                .envelope("cmds").value());
        assertThat(utc.get(WireFormat.CRON).textValue()).isEqualTo("0 * * * *");
        assertThat(utc.has(WireFormat.ZONE)).isFalse();
    }

    @Test
    void cronAndEveryReplaceEachOtherAsDelayAndAtDo() throws Exception {
        JsonNode n = new ObjectMapper().readTree(TimerCommand.schedule("q", "k").cron("0 * * * *", ZoneId.of("Asia/Tokyo"))
                .every(Duration.ofHours(1)).txn("t").payload("null").envelope("cmds").value());
        assertThat(n.has(WireFormat.CRON) || n.has(WireFormat.ZONE)).as("every replaced cron and its zone").isFalse();
        assertThat(n.get(WireFormat.EVERY).textValue()).isEqualTo("PT1H");
    }

    @Test
    void aRuleAndATimeTogetherFailAtBuildInEitherForm() {
        TimerCommand both = TimerCommand.schedule("q", "k").delay(Duration.ofSeconds(1)).cron("0 * * * *").txn("t").payload("null");
        assertThatThrownBy(() -> both.envelope("cmds")).isInstanceOf(IllegalStateException.class).hasMessageContaining("exclude");
        assertThatThrownBy(() -> both.headers("cmds")).isInstanceOf(IllegalStateException.class).hasMessageContaining("exclude");
        TimerCommand atAndEvery = TimerCommand.reschedule("q", "k").every(Duration.ofHours(1)).at(START).txn("t").payload("null");
        assertThatThrownBy(() -> atAndEvery.envelope("cmds")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aWindowWithoutARuleFailsAtBuild() {
        for (TimerCommand c : new TimerCommand[] {
                TimerCommand.schedule("q", "k").delay(Duration.ofSeconds(1)).startAt(START).txn("t").payload("null"),
                TimerCommand.schedule("q", "k").at(START).endAt(END).txn("t").payload("null"),
                TimerCommand.schedule("q", "k").delay(Duration.ofSeconds(1)).maxOccurrences(2).txn("t").payload("null"),
                TimerCommand.schedule("q", "k").delay(Duration.ofSeconds(1)).catchUp(CatchUp.ALL).txn("t").payload("null")}) {
            assertThatThrownBy(() -> c.envelope("cmds")).isInstanceOf(IllegalStateException.class).hasMessageContaining("belong to a rule");
        }
        assertThatThrownBy(() -> TimerCommand.schedule("q", "k").startAt(START).txn("t").payload("null").envelope("cmds"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("cron(...) or every(...)");
    }

    @Test
    void aCancelNamesNoRule() {
        assertThatThrownBy(() -> TimerCommand.cancel("q", "k").cron("0 * * * *").envelope("cmds")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> TimerCommand.cancel("q", "k").catchUp(CatchUp.ONE).headers("cmds")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theCatchUpPoliciesAreTheWireFormats() {
        assertThat(java.util.Arrays.stream(CatchUp.values()).map(CatchUp::wireName)).containsExactlyInAnyOrderElementsOf(WireFormat.CATCH_UP_POLICIES);
        assertThat(CatchUp.fromWire(WireFormat.DEFAULT_CATCH_UP)).contains(CatchUp.ONE);
        assertThat(CatchUp.fromWire("ONE")).isEmpty();
    }

    @Test
    void theOccurrenceTxnIsTheSeriesTxnAtTheInstant() {
        assertThat(WireFormat.occurrenceTxn("nightly", Instant.parse("2026-03-08T07:30:00Z"))).isEqualTo("nightly@2026-03-08T07:30:00Z");
    }
}
