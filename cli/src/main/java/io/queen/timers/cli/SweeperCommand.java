package io.queen.timers.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "sweeper", mixinStandardHelpOptions = true, description = "(pending integration)")
final class SweeperCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserError("sweeper: not integrated yet");
    }
}
