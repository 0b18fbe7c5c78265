package io.queen.timers.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "find", mixinStandardHelpOptions = true, description = "(pending integration)")
final class FindCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserError("find: not integrated yet");
    }
}
