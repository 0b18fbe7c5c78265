package io.queen.timers.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "tail", mixinStandardHelpOptions = true, description = "(pending integration)")
final class TailCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserError("tail: not integrated yet");
    }
}
