package io.queen.timers.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JVM options a service runs with as shipped, read from the files that ship them, so that a test runs what users run
 * and follows them when they change: the image's entrypoint flags ({@code docker/Dockerfile}, which must agree with the
 * Jib entrypoint of {@code image/pom.xml}) and the heap the Kubernetes manifests give a workload
 * ({@code JAVA_TOOL_OPTIONS} in {@code deploy/kubernetes/base/<workload>.yaml}). Paths from a module's directory, where
 * Maven runs the tests.
 */
public final class ShippedJvm {

    private static final Path ROOT = Path.of("..");

    private ShippedJvm() {}

    /** The image's JVM flags: what its entrypoint passes to {@code java} before {@code -jar}; both image builds agree. */
    public static List<String> imageFlags() {
        return imageFlags(ROOT);
    }

    /** The same, for the repository at {@code root} (the benchmarks run from the repository's root, not a module's). */
    public static List<String> imageFlags(Path root) {
        String dockerfile = read(root.resolve("docker/Dockerfile"));
        Matcher m = Pattern.compile("(?m)^ENTRYPOINT\\s*\\[(.*)]\\s*$").matcher(dockerfile);
        if (!m.find()) {
            throw new IllegalStateException("docker/Dockerfile has no ENTRYPOINT in exec form");
        }
        List<String> docker = new ArrayList<>();
        for (String part : m.group(1).split(",")) {
            docker.add(part.trim().replaceAll("^\"|\"$", ""));
        }
        Matcher jib = Pattern.compile("<entrypoint>([^<]*)</entrypoint>").matcher(read(root.resolve("image/pom.xml")));
        if (!jib.find()) {
            throw new IllegalStateException("image/pom.xml has no <entrypoint>");
        }
        List<String> flags = flagsBeforeJar(docker);
        List<String> jibFlags = flagsBeforeJar(Arrays.asList(jib.group(1).trim().split(",")));
        if (!flags.equals(jibFlags)) {
            throw new IllegalStateException("the two images start the JVM differently: docker/Dockerfile " + flags
                    + ", image/pom.xml " + jibFlags);
        }
        return flags;
    }

    /** The {@code JAVA_TOOL_OPTIONS} the Kubernetes manifests set for {@code workload} (bridge, sweeper, ...). */
    public static String manifestJavaToolOptions(String workload) {
        return manifestJavaToolOptions(ROOT, workload);
    }

    /** The same, for the repository at {@code root}. */
    public static String manifestJavaToolOptions(Path root, String workload) {
        String yaml = read(root.resolve("deploy/kubernetes/base/" + workload + ".yaml"));
        Matcher m = Pattern.compile("-\\s+name:\\s*JAVA_TOOL_OPTIONS\\s*\\n\\s*value:\\s*(\\S.*)").matcher(yaml);
        if (!m.find()) {
            throw new IllegalStateException("deploy/kubernetes/base/" + workload + ".yaml sets no JAVA_TOOL_OPTIONS");
        }
        return m.group(1).trim().replaceAll("^\"|\"$", "");
    }

    /**
     * The memory limit the Kubernetes manifests give {@code workload}'s container ({@code resources.limits.memory} in
     * {@code deploy/kubernetes/base/<workload>.yaml}), in bytes: what the kernel kills the process at, heap and native
     * memory together.
     */
    public static long manifestMemoryLimitBytes(String workload) {
        String yaml = read(ROOT.resolve("deploy/kubernetes/base/" + workload + ".yaml"));
        Matcher m = Pattern.compile("limits:\\s*\\n\\s*memory:\\s*(\\d+)(Mi|Gi)\\b").matcher(yaml);
        if (!m.find()) {
            throw new IllegalStateException("deploy/kubernetes/base/" + workload + ".yaml sets no resources.limits.memory in Mi or Gi");
        }
        return Long.parseLong(m.group(1)) << (m.group(2).equals("Gi") ? 30 : 20);
    }

    private static List<String> flagsBeforeJar(List<String> entrypoint) {
        int java = -1;
        int jar = entrypoint.indexOf("-jar");
        for (int i = 0; i < entrypoint.size(); i++) {
            if (entrypoint.get(i).equals("java") || entrypoint.get(i).endsWith("/java")) {
                java = i;
                break;
            }
        }
        if (java < 0 || jar < java) {
            throw new IllegalStateException("an entrypoint that is not `java <flags> -jar <jar>`: " + entrypoint);
        }
        return List.copyOf(entrypoint.subList(java + 1, jar));
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
