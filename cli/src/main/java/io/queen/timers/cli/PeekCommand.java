package io.queen.timers.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "peek", mixinStandardHelpOptions = true, description = "(pending integration)")
final class PeekCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserError("peek: not integrated yet");
    }
}
