package io.queen.timers.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "bridge", mixinStandardHelpOptions = true, description = "(pending integration)")
final class BridgeCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserError("bridge: not integrated yet");
    }
}
