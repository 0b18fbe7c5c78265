package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The launcher's shape: one command, every subcommand has --help, mistakes are one line. */
class LauncherTest {

    static final List<String> SUBCOMMANDS = List.of(
            "bridge", "sweeper", "http", "schedule", "cancel", "peek", "list", "find", "tail", "migrate");

    @Test
    void everySubcommandAnswersHelp() {
        for (String sub : SUBCOMMANDS) {
            Cli r = Cli.run(sub, "--help");
            assertThat(r.exitCode()).as(sub).isZero();
            assertThat(r.out()).as(sub).contains("Usage: queen-timers " + sub);
        }
        Cli top = Cli.run("--help");
        assertThat(top.exitCode()).isZero();
        assertThat(top.out()).contains(SUBCOMMANDS);
    }

    @Test
    void anUnknownOptionIsOneLineAndExitCode2() {
        Cli r = Cli.run("migrate", "--no-such-option");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: Unknown option: '--no-such-option'");
        assertThat(r.err().lines()).hasSize(2).last().asString().contains("queen-timers migrate --help");
    }

    @Test
    void aMissingRequiredSettingIsOneLineWithoutAStackTrace() {
        Cli r = Cli.run("migrate");
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: missing required setting jdbc.url (env QUEEN_JDBC_URL)");
        assertThat(r.err().lines()).hasSize(1);
        assertThat(r.err()).doesNotContain("\tat ");
    }

    @Test
    void configDocsListsEveryKeyWithItsEnvironmentName() {
        Cli r = Cli.run("config-docs");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("| `jdbc.url` |", "`QUEEN_JDBC_URL`", "`QUEEN_KAFKA_BOOTSTRAP`", "`QUEEN_HTTP_PORT`");
    }

    @Test
    void configDocsAlsoNamesEveryOpenTelemetryVariableTheServicesRead() {
        // not queen settings, so not in a ConfigDef; read by TelemetrySettings alone, which may read no other variable
        String out = Cli.run("config-docs").out();
        assertThat(io.queen.timers.core.telemetry.TelemetrySettings.VARIABLES).isNotEmpty()
                .allSatisfy((name, doc) -> assertThat(out).contains("| `" + name + "` |"));
        assertThat(out).contains("`OTEL_SDK_DISABLED`", "`OTEL_TRACES_EXPORTER`", "`OTEL_EXPORTER_OTLP_ENDPOINT`");
    }

    @Test
    void theShippedLogbackConfigurationIsWellFormedXml() throws Exception {
        // tests run with the testkit's logback-test.xml, so the jar's own file is parsed here
        try (var in = QueenTimers.class.getResourceAsStream("/logback.xml")) {
            assertThat(in).isNotNull();
            javax.xml.parsers.DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
        }
    }

    @Test
    void theConfigurationTableIsTheGeneratedOne() throws Exception {
        // regenerate with: java -jar cli/target/queen-timers-service.jar config-docs
        String readme = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "configuration.md"));
        Cli r = Cli.run("config-docs");
        assertThat(r.out().lines()).hasSizeGreaterThan(10).allSatisfy(line -> assertThat(readme).contains(line));
    }
}
