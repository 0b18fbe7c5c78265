package io.queen.timers.cli;

import io.queen.timers.core.text.Printable;
import io.queen.timers.core.text.Secrets;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * A mistake is one line on stderr and a non-zero exit code, never a stack trace: a bad option is
 * exit 2 with a pointer to {@code --help}; a failure while running (bad setting, unreachable
 * database or broker, unknown queue) is exit 1 with the message and its root cause. The whole
 * trace only with {@code queen-timers --stacktrace ...}.
 */
final class Errors implements IExecutionExceptionHandler, IParameterExceptionHandler {

    private final QueenTimers root;

    Errors(QueenTimers root) {
        this.root = root;
    }

    @Override
    public int handleExecutionException(Exception ex, CommandLine cmd, ParseResult parseResult) {
        PrintWriter err = cmd.getErr();
        if (root.stacktrace) {
            err.println(Printable.line(Secrets.mask(String.valueOf(ex))));
            for (StackTraceElement e : ex.getStackTrace()) {
                err.println("\tat " + e);
            }
            for (Throwable c = ex.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
                err.println("Caused by: " + Printable.line(Secrets.mask(String.valueOf(c))));
            }
        } else {
            err.println("error: " + describe(ex));
        }
        err.flush();
        return ex instanceof InterruptedException ? 130 : 1;
    }

    @Override
    public int handleParseException(ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        PrintWriter err = cmd.getErr();
        err.println("error: " + oneLine(ex.getMessage()));
        err.println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help'.");
        err.flush();
        return cmd.getCommandSpec().exitCodeOnInvalidInput();
    }

    /** The message, and the root cause when it says something the message does not. */
    static String describe(Throwable ex) {
        String top = ex.getMessage() == null ? ex.getClass().getSimpleName() : ex.getMessage();
        Throwable rootCause = ex;
        while (rootCause.getCause() != null && rootCause.getCause() != rootCause) {
            rootCause = rootCause.getCause();
        }
        String text = top;
        if (rootCause != ex && rootCause.getMessage() != null && !top.contains(rootCause.getMessage())) {
            text = top + " (" + rootCause.getMessage() + ")";
        }
        return oneLine(text);
    }

    /** One line, secrets masked (a JDBC URL's password=), control characters escaped: it is printed to a terminal. */
    private static String oneLine(String s) {
        return Printable.line(Secrets.mask(s.replaceAll("\\s*\\R\\s*", " ").trim()));
    }
}
