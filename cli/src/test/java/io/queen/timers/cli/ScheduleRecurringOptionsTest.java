package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * schedule's recurring-timer options (docs/commands.md#recurring-timers) and the record they produce, without a broker: the
 * options are parsed by the launcher's own command line and the command is built as call() builds it, not sent.
 */
class ScheduleRecurringOptionsTest {

    /** The schedule command as the launcher parses {@code args} (after "schedule -q reports -k nightly"). */
    static ScheduleCommand parsed(String... args) {
        StringWriter sink = new StringWriter();
        CommandLine cl = QueenTimers.commandLine(new QueenTimers(Map.of()), new PrintWriter(sink), new PrintWriter(sink));
        String[] all = new String[args.length + 5];
        System.arraycopy(new String[] {"schedule", "-q", "reports", "-k", "nightly"}, 0, all, 0, 5);
        System.arraycopy(args, 0, all, 5, args.length);
        return (ScheduleCommand) cl.parseArgs(all).subcommand().commandSpec().userObject();
    }

    static JsonNode envelope(String... args) throws Exception {
        return Output.mapper().readTree(parsed(args).command().envelope("cmds").value());
    }

    @Test
    void aCronWithItsZoneWindowCountAndPolicyIsInTheEnvelope() throws Exception {
        JsonNode n = envelope("--cron", "30 2 * * *", "--zone", "Europe/Berlin", "--start-at", "2026-03-01T01:00:00+01:00",
                "--end-at", "2026-04-01T00:00:00Z", "--max-occurrences", "5", "--catch-up", "none", "--txn", "nightly");
        assertThat(n.get("op").asText()).isEqualTo("schedule");
        assertThat(n.get("cron").asText()).isEqualTo("30 2 * * *");
        assertThat(n.get("zone").asText()).isEqualTo("Europe/Berlin");
        assertThat(n.get("startAt").asText()).as("an instant, in UTC").isEqualTo("2026-03-01T00:00:00Z");
        assertThat(n.get("endAt").asText()).isEqualTo("2026-04-01T00:00:00Z");
        assertThat(n.get("maxOccurrences").asInt()).isEqualTo(5);
        assertThat(n.get("catchUp").asText()).isEqualTo("none");
        assertThat(n.get("txn").asText()).isEqualTo("nightly");
        assertThat(n.has("delayMs") || n.has("deliverAt") || n.has("every")).isFalse();
    }

    @Test
    void everyTakesTheCliDurationsAndWritesIso8601() throws Exception {
        JsonNode n = envelope("--every", "90m", "--catch-up", "all", "--reschedule");
        assertThat(n.get("op").asText()).isEqualTo("reschedule");
        assertThat(n.get("every").asText()).isEqualTo("PT1H30M");
        assertThat(n.get("catchUp").asText()).isEqualTo("all");
        assertThat(n.has("cron") || n.has("zone") || n.has("startAt")).isFalse();
        assertThat(envelope("--every", "PT1S").get("every").asText()).isEqualTo("PT1S");
    }

    @Test
    void theHeadersFormCarriesTheSameRule() {
        Map<String, String> h = new java.util.HashMap<>();
        for (Header header : parsed("--cron", "0 * * * *", "--max-occurrences", "3").command().headers("cmds").headers()) {
            h.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
        }
        assertThat(h).containsEntry("queen-cron", "0 * * * *").containsEntry("queen-max-occurrences", "3")
                .doesNotContainKeys("queen-zone", "queen-delay-ms");
    }

    @Test
    void theOneShotOptionsAreUnchanged() throws Exception {
        assertThat(envelope("--delay", "30s").get("delayMs").asLong()).isEqualTo(30_000);
        assertThat(envelope("--at", "2030-01-01T01:00:00+01:00").get("deliverAt").asText()).isEqualTo("2030-01-01T00:00:00Z");
    }

    @Test
    void aRuleExcludesADelayAnAtAndTheOtherRule() {
        for (String[] args : new String[][] {
                {"--cron", "0 * * * *", "--delay", "1s"},
                {"--every", "1h", "--at", "2030-01-01T00:00:00Z"},
                {"--cron", "0 * * * *", "--every", "1h"}}) {
            Cli r = Cli.run(with(args));
            assertThat(r.exitCode()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(r.err()).as(String.join(" ", args)).contains("mutually exclusive");
        }
    }

    @Test
    void theWindowOptionsNeedARule() {
        for (String[] args : new String[][] {
                {"--delay", "1s", "--start-at", "2030-01-01T00:00:00Z"},
                {"--at", "2030-01-01T00:00:00Z", "--catch-up", "all"},
                {"--delay", "1s", "--end-at", "2030-01-01T00:00:00Z", "--max-occurrences", "3"}}) {
            Cli r = Cli.run(with(args));
            assertThat(r.exitCode()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(r.err()).as(String.join(" ", args)).startsWith("error: --zone, --start-at, --end-at, --max-occurrences and --catch-up go with --cron or --every only");
        }
        Cli none = Cli.run(with("--max-occurrences", "3"));
        assertThat(none.exitCode()).isEqualTo(2);
        assertThat(none.err()).contains("Missing required argument").contains("--cron").contains("--every");
    }

    @Test
    void theHelpListsTheRecurringOptionsUnderTheirHeading() {
        Cli r = Cli.run("schedule", "--help");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("--cron=EXPR", "--every=DURATION", "Recurring timer", "--catch-up=POLICY", "--max-occurrences=N");
    }

    @Test
    void aZoneGoesWithACronOnly() {
        Cli r = Cli.run(with("--every", "1h", "--zone", "Europe/Berlin"));
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: --zone goes with --cron only");
    }

    @Test
    void aValueThatDoesNotParseIsRefusedBeforeAnythingIsSent() {
        assertThat(Cli.run(with("--cron", "0 * * * *", "--zone", "Mars/Olympus")).err()).startsWith("error: --zone 'Mars/Olympus'");
        assertThat(Cli.run(with("--every", "often")).err()).startsWith("error: --every 'often'");
        assertThat(Cli.run(with("--every", "1h", "--start-at", "tomorrow")).err()).startsWith("error: --start-at 'tomorrow'");
        assertThat(Cli.run(with("--every", "1h", "--end-at", "2030-01-01T00:00:00")).err()).startsWith("error: --end-at");
        Cli policy = Cli.run(with("--every", "1h", "--catch-up", "some"));
        assertThat(policy.exitCode()).isEqualTo(1);
        assertThat(policy.err()).startsWith("error: --catch-up 'some' is not one, all or none");
    }

    /** A schedule to a broker that is not there: every refusal above comes before any connection. */
    static String[] with(String... args) {
        String[] all = new String[args.length + 7];
        System.arraycopy(new String[] {"schedule", "-b", "127.0.0.1:1", "-q", "q", "-k", "k"}, 0, all, 0, 7);
        System.arraycopy(args, 0, all, 7, args.length);
        return all;
    }
}
