package io.queen.timers.local;

import io.queen.timers.cli.QueenTimers;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * The full launcher's main ({@code local/target/queen-timers.jar}): the cli's launcher plus {@code local}, the
 * embedded stack. Added by name here rather than found through a ServiceLoader: the one jar that has
 * {@code local} says so in one line, and no jar on a class path can add a command silently. The price: a
 * third launcher with more commands would need a main of its own too.
 */
public final class LocalLauncher {

    private LocalLauncher() {}

    public static void main(String[] args) {
        System.exit(commandLine(new QueenTimers(), new PrintWriter(System.out, true), new PrintWriter(System.err, true)).execute(args));
    }

    /** The launcher with {@code local}, writing to {@code out} and {@code err}: what main runs, and what tests run. */
    public static CommandLine commandLine(QueenTimers root, PrintWriter out, PrintWriter err) {
        return QueenTimers.commandLine(root, out, err, new LocalCommand());
    }
}
