package io.queen.timers.local;

import io.queen.timers.cli.QueenTimers;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

/** Runs the full launcher in this JVM exactly as main does, capturing what a user would see (the cli's tests have Cli). */
record Launch(int exitCode, String out, String err) {

    static Launch run(String... args) {
        return run(Map.of(), args);
    }

    static Launch run(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = LocalLauncher.commandLine(new QueenTimers(env), new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
        return new Launch(code, out.toString(), err.toString());
    }
}
