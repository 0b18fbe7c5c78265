package io.queen.timers.processes;

import io.queen.timers.embedded.EmbeddedKafkaBroker;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The Kafka broker as a JVM of its own, so the harness can {@code kill -9} it and start it again on the
 * same data directory and port: {@code BrokerMain [--exit-when-up] <log dir> <port> [name=value ...]}. The
 * project's embedded broker (single-node KRaft), its server settings overridden by the {@code name=value}
 * arguments. {@code --exit-when-up} ends the JVM normally once the broker is up: a run that only records
 * the classes a start loads ({@link Launcher#brokerClassArchive}).
 */
public final class BrokerMain {

    private BrokerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        boolean exitWhenUp = args.length > 0 && args[0].equals("--exit-when-up");
        if (exitWhenUp) {
            args = java.util.Arrays.copyOfRange(args, 1, args.length);
        }
        Map<String, String> overrides = new LinkedHashMap<>();
        for (int i = 2; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            overrides.put(kv[0], kv[1]);
        }
        EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(Path.of(args[0]), Integer.parseInt(args[1]), false, overrides);
        System.err.println("broker up at " + broker.bootstrapServers());
        if (exitWhenUp) {
            // No clean shutdown: the JVM's normal exit is all the class archive needs, and it is quick.
            System.exit(0);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            broker.close();
            stopped.countDown();
        }, "broker-stop"));
        stopped.await();
    }
}
