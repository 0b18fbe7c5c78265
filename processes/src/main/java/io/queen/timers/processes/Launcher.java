package io.queen.timers.processes;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * How the project's processes are started from the launcher jar ({@code local/target/queen-timers.jar}),
 * exactly as operators start them: a bridge or a sweeper is {@code java -jar queen-timers.jar <role>
 * --config <file>}, the schema is {@code queen-timers migrate}, the broker is {@link BrokerMain} on the
 * launcher jar's classes. The fault harness and the pipeline benchmark both start their stacks here.
 */
public final class Launcher {

    private final Path launcherJar;
    private final String javaBin = ProcessHandle.current().info().command().orElse("java");

    public Launcher(Path launcherJar) {
        if (!Files.isRegularFile(launcherJar)) {
            throw new IllegalStateException("launcher jar " + launcherJar + " not found: build it first"
                    + " (mvn -B -q -DskipTests -pl local -am package)");
        }
        this.launcherJar = launcherJar.toAbsolutePath();
    }

    public Path launcherJar() {
        return launcherJar;
    }

    /** A bridge or sweeper ({@code role}) with its settings written to {@code settingsFile}; not started yet. */
    public ManagedProcess service(String role, String name, Properties settings, Path settingsFile, List<String> jvmOptions,
            Path logFile) {
        return service(role, name, settings, settingsFile, jvmOptions, Map.of(), logFile);
    }

    /**
     * The same, with environment variables for its JVM: {@code JAVA_TOOL_OPTIONS}, as the Kubernetes manifests set the
     * heap (the benchmarks start the services as deployed), or libfaketime's (the fault harness's clock step).
     */
    public ManagedProcess service(String role, String name, Properties settings, Path settingsFile, List<String> jvmOptions,
            Map<String, String> env, Path logFile) {
        try {
            Files.createDirectories(settingsFile.getParent());
            try (var out = Files.newOutputStream(settingsFile)) {
                settings.store(out, name);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + settingsFile, e);
        }
        List<String> cmd = new ArrayList<>(List.of(javaBin));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-jar", launcherJar.toString(), role, "--config", settingsFile.toString()));
        return new ManagedProcess(name, cmd, env, logFile);
    }

    /** The Kafka broker as a JVM of its own on {@code dataDir} and {@code port}; not started yet. */
    public ManagedProcess broker(Path dataDir, int port, List<String> jvmOptions, Path logFile) {
        return broker(dataDir, port, jvmOptions, Map.of(), false, logFile);
    }

    /**
     * The same, with the broker's server settings {@code overrides} (name to value) over the embedded broker's,
     * and with {@code standby} each start taken over by a JVM started (and warmed up) beforehand
     * ({@link ManagedProcess#withStandby}).
     */
    public ManagedProcess broker(Path dataDir, int port, List<String> jvmOptions, Map<String, String> overrides, boolean standby,
            Path logFile) {
        List<String> cmd = new ArrayList<>(List.of(javaBin));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", launcherJar + File.pathSeparator + ownJar(), BrokerMain.class.getName()));
        if (standby) {
            cmd.add("--standby");
        }
        cmd.addAll(List.of(dataDir.toString(), Integer.toString(port)));
        overrides.forEach((k, v) -> cmd.add(k + "=" + v));
        return standby ? ManagedProcess.withStandby("broker", cmd, Map.of(), logFile) : new ManagedProcess("broker", cmd, Map.of(), logFile);
    }

    /** {@code queen-timers <args>} to completion (e.g. {@code migrate}); its output goes to {@code logFile}. */
    public void runOnce(List<String> args, Path logFile) throws InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(javaBin, "-jar", launcherJar.toString()));
        cmd.addAll(args);
        try {
            Files.createDirectories(logFile.getParent());
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(logFile.toFile()).start();
            if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("queen-timers " + args.get(0) + " failed (see " + logFile + ")");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Until this start of {@code p} logged that it runs (the service host's line); false after the timeout. */
    public static boolean awaitRunning(ManagedProcess p, long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (!p.startedLogContains("running;")) {
            if (System.currentTimeMillis() > deadline) {
                return false;
            }
            Thread.sleep(250);
        }
        return true;
    }

    public static void awaitPort(int port, long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                Thread.sleep(100);
            }
        }
        throw new IllegalStateException("port " + port + " did not open within " + timeoutMs + " ms");
    }

    /**
     * A free port for a service restarted on the same port (PostgreSQL, the broker): below the kernel's ephemeral range,
     * so that no outgoing connection made while the service is down can take it as its local port. A CI run on 297c810
     * lost a broker restart to "Address already in use" on port 34609, inside 32768-60999, which {@link #freePort} draws
     * from. Falls back to {@link #freePort} if no port below the range is free.
     */
    public static int servicePort() {
        int below = ephemeralLow();
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int i = 0; i < 200 && below > SERVICE_PORTS_FROM + 1; i++) {
            int port = SERVICE_PORTS_FROM + random.nextInt(below - SERVICE_PORTS_FROM);
            try (ServerSocket s = new ServerSocket(port)) {
                return port;
            } catch (IOException taken) {
                // try another
            }
        }
        return freePort();
    }

    private static final int SERVICE_PORTS_FROM = 10_000;

    /** The first port of the kernel's ephemeral range (Linux), 32768 where it cannot be read. */
    static int ephemeralLow() {
        try {
            // read by line: Files.readString of this /proc file returned its first byte only (JDK 17)
            String range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim();
            return Integer.parseInt(range.split("\\s+")[0]);
        } catch (IOException | RuntimeException unreadable) {
            return 32_768;
        }
    }

    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** This module's classes (its jar, or the shaded jar that carries them): BrokerMain is not in the launcher jar. */
    private static String ownJar() {
        try {
            return Path.of(BrokerMain.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
