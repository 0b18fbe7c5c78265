package io.queen.timers.faults.stack;

import io.queen.timers.embedded.EmbeddedKafkaBroker;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * The Kafka broker as a JVM of its own, so the harness can {@code kill -9} it and start it again on the
 * same data directory and port: {@code BrokerMain <log dir> <port>}. The project's embedded broker
 * (single-node KRaft), nothing else.
 */
public final class BrokerMain {

    private BrokerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(Path.of(args[0]), Integer.parseInt(args[1]), false);
        System.err.println("broker up at " + broker.bootstrapServers());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            broker.close();
            stopped.countDown();
        }, "broker-stop"));
        stopped.await();
    }
}
