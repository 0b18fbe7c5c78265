package io.queen.timers.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

/** Runs the launcher in this JVM exactly as main does, capturing what a user would see. */
record Cli(int exitCode, String out, String err) {

    static Cli run(String... args) {
        return run(Map.of(), args);
    }

    static Cli run(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = QueenTimers.commandLine(new QueenTimers(env), new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
        return new Cli(code, out.toString(), err.toString());
    }
}
