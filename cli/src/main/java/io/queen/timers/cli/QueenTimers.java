package io.queen.timers.cli;

import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The launcher: {@code java -jar queen-timers-service.jar <subcommand>} (this module's jar) or
 * {@code java -jar queen-timers.jar <subcommand>} (module {@code local}'s, which adds {@code local}). The
 * services ({@code bridge}, {@code sweeper}, {@code http}) and the operator tools share it so that an
 * operator has one thing to install and one {@code --help} to read.
 *
 * <p>{@code local} is not declared below: module {@code local} adds it ({@link #commandLine(QueenTimers,
 * PrintWriter, PrintWriter, Object...)}), so this module carries neither it nor the embedded broker and
 * PostgreSQL it needs, and the service jar is simply this module shaded. A new subcommand declared below is
 * in both jars.
 *
 * <p>Exit codes: 0 done, 1 error (one line on stderr), 2 usage error, 3 "not there" ({@code peek},
 * {@code find}, {@code dead-letters show|replay|drop}), 130 interrupted.
 */
@Command(name = "queen-timers",
        mixinStandardHelpOptions = true,
        versionProvider = Version.class,
        description = "Kafka-fronted timers for the Queen message log on PostgreSQL.",
        subcommands = {
            BridgeCommand.class,
            SweeperCommand.class,
            HttpCommand.class,
            ScheduleCommand.class,
            CancelCommand.class,
            PeekCommand.class,
            ListCommand.class,
            FindCommand.class,
            TailCommand.class,
            MigrateCommand.class,
            OffsetsCommand.class,
            DeadLettersCommand.class,
            AuditTail.class,
            ConfigDocsCommand.class,
            CommandLine.HelpCommand.class,
        })
public final class QueenTimers implements Runnable {

    public static final int EXIT_NOT_FOUND = 3;

    private final Map<String, String> env;

    @Spec
    CommandSpec spec;

    @Option(names = "--stacktrace", description = "On an error, print the whole stack trace instead of one line.")
    boolean stacktrace;

    public QueenTimers() {
        this(System.getenv());
    }

    /** @param env the environment the settings are read from (the process's, or a test's own). */
    public QueenTimers(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    public static void main(String[] args) {
        System.exit(commandLine(new QueenTimers(), new PrintWriter(System.out, true), new PrintWriter(System.err, true)).execute(args));
    }

    /**
     * The launcher with its error handling, writing to {@code out} and {@code err}: what main runs, and what tests
     * run. {@code more} are subcommands a launcher built on this one adds (module {@code local}'s {@code local}),
     * listed before {@code help}, which stays last.
     */
    public static CommandLine commandLine(QueenTimers root, PrintWriter out, PrintWriter err, Object... more) {
        CommandLine launcher = new CommandLine(root);
        if (more.length > 0) {
            launcher.getCommandSpec().removeSubcommand("help");
            for (Object sub : more) {
                launcher.addSubcommand(sub);
            }
            launcher.addSubcommand(new CommandLine.HelpCommand());
        }
        return configured(launcher, root, out, err);
    }

    private static CommandLine configured(CommandLine launcher, QueenTimers root, PrintWriter out, PrintWriter err) {
        Errors errors = new Errors(root);
        return launcher
                .setOut(out)
                .setErr(err)
                .setExecutionExceptionHandler(errors)
                .setParameterExceptionHandler(errors)
                .setCaseInsensitiveEnumValuesAllowed(true);
    }

    public Map<String, String> env() {
        return env;
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
