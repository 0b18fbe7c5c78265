package io.queen.timers.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "list", mixinStandardHelpOptions = true, description = "(pending integration)")
final class ListCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserError("list: not integrated yet");
    }
}
