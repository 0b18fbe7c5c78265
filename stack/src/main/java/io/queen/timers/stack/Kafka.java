package io.queen.timers.stack;

import io.queen.timers.embedded.EmbeddedKafkaBroker;
import io.queen.timers.embedded.SharedKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Where a {@link Stack}'s Kafka broker comes from: an in-process KRaft broker of its own, or one that is already running. */
public interface Kafka {

    /** An in-process broker in a temporary directory on any free port, removed when the stack stops. */
    static Kafka embedded() {
        return new Embedded(null, 0);
    }

    /** An in-process broker keeping its log in {@code dataDir} (a temporary one when null), on {@code port} (0: any free). */
    static Kafka embedded(Path dataDir, int port) {
        return new Embedded(dataDir, port);
    }

    /** A broker that is already running (PLAINTEXT). */
    static Kafka external(String bootstrapServers) {
        return new External(bootstrapServers);
    }

    /** Starts (or, for an external one, names) the broker. */
    Running start();

    /** This JVM's shared test broker ({@link SharedKafka}: {@code QUEEN_TEST_KAFKA}, else one in-process broker for the JVM). */
    static Kafka shared() {
        return new External(SharedKafka.bootstrapServers());
    }

    /**
     * No broker: for a stack whose services publish nothing (their audit relays off, {@code audit.relay.enabled=false}), a
     * benchmark of the sweeper alone, say. The services are given an address nothing listens on, and no topic is made.
     */
    static Kafka none() {
        return new None();
    }

    record None() implements Kafka {
        /** A loopback port no server binds (port 1, tcpmux): a client that tries it is refused at once. */
        static final String NOWHERE = "127.0.0.1:1";

        @Override
        public Running start() {
            return new Running(NOWHERE, null, false);
        }
    }

    record Embedded(Path dataDir, int port) implements Kafka {
        @Override
        public Running start() {
            EmbeddedKafkaBroker broker = dataDir == null
                    ? EmbeddedKafkaBroker.start(temporaryDirectory(), port, true)
                    : EmbeddedKafkaBroker.start(dataDir, port, false);
            return new Running(broker.bootstrapServers(), broker, true);
        }

        private static Path temporaryDirectory() {
            try {
                return Files.createTempDirectory("queen-stack-kafka-");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    record External(String bootstrapServers) implements Kafka {
        @Override
        public Running start() {
            return new Running(bootstrapServers, null, true);
        }
    }

    /**
     * The broker a stack uses ({@code present} false for {@link #none()}); {@link #close()} stops it when the stack
     * started it.
     */
    record Running(String bootstrapServers, AutoCloseable broker, boolean present) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            if (broker != null) {
                broker.close();
            }
        }
    }
}
