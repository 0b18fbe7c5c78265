package io.queen.timers.cli;

import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.core.config.ConfigLoader;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code queen-timers bridge}: consume commands from Kafka into queen.log_timers until stopped. */
@Command(name = "bridge", mixinStandardHelpOptions = true,
        description = {"Run a bridge: Kafka commands -> queen.log_timers.",
            "Every verdict goes to the audit outbox in the same transaction.",
            "Settings: --config FILE and QUEEN_* environment variables (docs/configuration.md).",
            "Serves /health/live, /health/ready and /metrics on http.port. SIGTERM stops it gracefully."})
final class BridgeCommand implements Callable<Integer> {

    @ParentCommand QueenTimers root;

    @Option(names = "--config", paramLabel = "FILE", description = "Properties file (optional; the environment overrides it).")
    Path config;

    @Override
    public Integer call() {
        return BridgeMain.host(BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), config, root.env()))).runUntilStopped();
    }
}
