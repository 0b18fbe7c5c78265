package io.queen.timers.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The JVM a service runs in as shipped, read from the files that ship it, so a benchmark measures what users run and
 * follows a change of them: the image's flags (the {@code java} options of {@code docker/Dockerfile}'s ENTRYPOINT:
 * {@code -XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError} today) on the command line, and the manifest's
 * {@code JAVA_TOOL_OPTIONS} ({@code deploy/kubernetes/base/<role>.yaml}: {@code -Xmx256m}) in the environment, as
 * Kubernetes passes it. The peers of the steady comparison (db-scheduler) get the same JVM, so a ratio compares code,
 * not heaps.
 */
public record DeployedJvm(List<String> imageFlags, String javaToolOptions) {

    /** Read from the repository at {@code repo} (the working directory of bench/run). */
    public static DeployedJvm of(Path repo, String role) {
        return new DeployedJvm(imageFlags(repo.resolve("docker/Dockerfile")),
                javaToolOptions(repo.resolve("deploy/kubernetes/base/" + role + ".yaml")));
    }

    /** The environment the JVM gets: {@code JAVA_TOOL_OPTIONS}. */
    public Map<String, String> env() {
        return Map.of("JAVA_TOOL_OPTIONS", javaToolOptions);
    }

    /** The flags and the environment as one line for the output. */
    public String describe() {
        return String.join(" ", imageFlags) + " (image ENTRYPOINT) + JAVA_TOOL_OPTIONS=" + javaToolOptions + " (manifest)";
    }

    /** The options between {@code java} and {@code -jar} of the ENTRYPOINT's exec form. */
    static List<String> imageFlags(Path dockerfile) {
        for (String line : lines(dockerfile)) {
            if (line.startsWith("ENTRYPOINT")) {
                try {
                    List<String> argv = List.of(new ObjectMapper().readValue(line.substring("ENTRYPOINT".length()).trim(), String[].class));
                    int jar = argv.indexOf("-jar");
                    if (argv.isEmpty() || !argv.get(0).equals("java") || jar < 0) {
                        throw new IllegalStateException(dockerfile + ": the ENTRYPOINT is not [\"java\", <options>, \"-jar\", ...]: " + line);
                    }
                    return List.copyOf(new ArrayList<>(argv.subList(1, jar)));
                } catch (IOException e) {
                    throw new IllegalStateException(dockerfile + ": the ENTRYPOINT is not a JSON array: " + line, e);
                }
            }
        }
        throw new IllegalStateException(dockerfile + " has no ENTRYPOINT");
    }

    /** The value of the container's env entry JAVA_TOOL_OPTIONS (the line after {@code - name: JAVA_TOOL_OPTIONS}). */
    static String javaToolOptions(Path manifest) {
        List<String> lines = lines(manifest);
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (lines.get(i).trim().equals("- name: JAVA_TOOL_OPTIONS") && lines.get(i + 1).trim().startsWith("value:")) {
                return lines.get(i + 1).trim().substring("value:".length()).trim().replaceAll("^\"|\"$", "");
            }
        }
        throw new IllegalStateException(manifest + " sets no JAVA_TOOL_OPTIONS");
    }

    private static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + " (run from the repository's root, as bench/run does)", e);
        }
    }
}
