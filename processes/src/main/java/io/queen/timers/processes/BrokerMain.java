package io.queen.timers.processes;

import io.queen.timers.embedded.EmbeddedKafkaBroker;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The Kafka broker as a JVM of its own, so the harness can {@code kill -9} it and start it again on the
 * same data directory and port: {@code BrokerMain [--standby] <log dir> <port> [name=value ...]}. The
 * project's embedded broker (single-node KRaft), its server settings overridden by the {@code name=value}
 * arguments.
 *
 * <p>{@code --standby}: first a throw-away broker (temporary directory, free ports, the same settings) is
 * started and closed, which loads and compiles what a start needs; then it waits for a line on stdin and
 * only then starts the real broker. A JVM start costs ~3 CPU seconds, most of a broker restart on two shared
 * cores; a standby spends them while the broker it replaces still runs ({@link ManagedProcess#withStandby}).
 */
public final class BrokerMain {

    private BrokerMain() {
    }

    public static void main(String[] args) throws InterruptedException, IOException {
        boolean standby = args.length > 0 && args[0].equals("--standby");
        if (standby) {
            args = Arrays.copyOfRange(args, 1, args.length);
        }
        Map<String, String> overrides = new LinkedHashMap<>();
        for (int i = 2; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            overrides.put(kv[0], kv[1]);
        }
        if (standby) {
            long t = System.nanoTime();
            try (EmbeddedKafkaBroker warmUp = EmbeddedKafkaBroker.startTemporary(overrides)) {
                System.err.println("broker standby: warm-up broker up at " + warmUp.bootstrapServers());
            }
            System.err.println("broker standby: warm after " + (System.nanoTime() - t) / 1_000_000 + " ms; waiting for the word to start");
            String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            if (line == null) {
                System.err.println("broker standby: stdin closed (the harness is gone); exiting");
                System.exit(0);
            }
        }
        EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(Path.of(args[0]), Integer.parseInt(args[1]), false, overrides);
        System.err.println("broker up at " + broker.bootstrapServers());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            broker.close();
            stopped.countDown();
        }, "broker-stop"));
        stopped.await();
    }
}
