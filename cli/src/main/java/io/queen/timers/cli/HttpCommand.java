package io.queen.timers.cli;

import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.http.HttpMain;
import io.queen.timers.http.HttpSettings;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code queen-timers http}: the HTTP API (docs/http-api.md) until stopped. */
@Command(name = "http", mixinStandardHelpOptions = true,
        description = {"Run the HTTP API: POST /api/v1/timers, DELETE /api/v1/timers/{queue}/{timerKey} on api.port.",
            "Each operation is written to the command topic and answered with the bridge's verdict from the audit topic.",
            "Settings: --config FILE and QUEEN_* environment variables (docs/configuration.md).",
            "Serves /health/live, /health/ready and /metrics on http.port. SIGTERM stops it gracefully."})
final class HttpCommand implements Callable<Integer> {

    @ParentCommand QueenTimers root;

    @Option(names = "--config", paramLabel = "FILE", description = "Properties file (optional; the environment overrides it).")
    Path config;

    @Override
    public Integer call() {
        return HttpMain.host(HttpSettings.from(ConfigLoader.load(HttpSettings.definition(), config, root.env()))).runUntilStopped();
    }
}
