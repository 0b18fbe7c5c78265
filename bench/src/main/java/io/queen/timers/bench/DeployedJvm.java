package io.queen.timers.bench;

import io.queen.timers.testkit.ShippedJvm;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The JVM a service runs in as shipped, for a benchmark to start a process in: the image's flags on the command line
 * and the manifest's {@code JAVA_TOOL_OPTIONS} in the environment, as Kubernetes passes it, both read by
 * {@link ShippedJvm} from the files that ship them ({@code docker/Dockerfile}, {@code image/pom.xml},
 * {@code deploy/kubernetes/base/<workload>.yaml}). The peers of the steady comparison (db-scheduler) get the same JVM,
 * so a ratio compares code, not heaps.
 */
public record DeployedJvm(List<String> imageFlags, String javaToolOptions) {

    /** Read from the repository at {@code repo} (the working directory of bench/run) for {@code workload}. */
    public static DeployedJvm of(Path repo, String workload) {
        return new DeployedJvm(ShippedJvm.imageFlags(repo), ShippedJvm.manifestJavaToolOptions(repo, workload));
    }

    /** The environment the JVM gets: {@code JAVA_TOOL_OPTIONS}. */
    public Map<String, String> env() {
        return Map.of("JAVA_TOOL_OPTIONS", javaToolOptions);
    }

    /** The flags and the environment as one line for the output. */
    public String describe() {
        return String.join(" ", imageFlags) + " (image entrypoint) + JAVA_TOOL_OPTIONS=" + javaToolOptions + " (manifest)";
    }
}
