package io.queen.timers.cli.local;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "local", mixinStandardHelpOptions = true, description = "(pending integration)")
public final class LocalCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new IllegalStateException("local: not integrated yet");
    }
}
