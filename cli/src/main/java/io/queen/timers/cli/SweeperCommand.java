package io.queen.timers.cli;

import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code queen-timers sweeper}: fire due timers into the log until stopped. */
@Command(name = "sweeper", mixinStandardHelpOptions = true,
        description = {"Run a sweeper: fire due timers into the log.",
            "Claims due timers, fires each exactly once, retries or dead-letters failures.",
            "Settings: --config FILE and QUEEN_* environment variables (docs/configuration.md).",
            "Serves /health/live, /health/ready and /metrics on http.port. SIGTERM stops it gracefully."})
final class SweeperCommand implements Callable<Integer> {

    @ParentCommand QueenTimers root;

    @Option(names = "--config", paramLabel = "FILE", description = "Properties file (optional; the environment overrides it).")
    Path config;

    @Override
    public Integer call() {
        return SweeperMain.host(SweeperSettings.from(ConfigLoader.load(SweeperSettings.definition(), config, root.env()))).runUntilStopped();
    }
}
