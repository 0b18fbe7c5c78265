package io.queen.timers.embedded;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * A real, single-node Kafka broker (KRaft, combined broker + controller) running in this JVM.
 * Used by the tests when neither {@code QUEEN_TEST_KAFKA} nor Docker is available, and by the
 * {@code local} stack.
 *
 * <p>Price: a fatal broker fault halts the whole JVM (Kafka's fault handler), so the host JVM
 * needs heap headroom; the log cleaner's dedupe buffer is cut to 2 MiB because its default
 * (128 MiB) alone kills a small heap.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {

    private final KafkaRaftServer server;
    private final String bootstrapServers;
    private final Path logDir;
    private final boolean deleteOnClose;

    private EmbeddedKafkaBroker(KafkaRaftServer server, String bootstrapServers, Path logDir, boolean deleteOnClose) {
        this.server = server;
        this.bootstrapServers = bootstrapServers;
        this.logDir = logDir;
        this.deleteOnClose = deleteOnClose;
    }

    /** A throw-away broker on free ports with a temporary log directory. */
    public static EmbeddedKafkaBroker startTemporary() {
        return startTemporary(Map.of());
    }

    /** A throw-away broker whose server settings are overridden by {@code overrides} (e.g. auto-create off). */
    public static EmbeddedKafkaBroker startTemporary(Map<String, String> overrides) {
        try {
            return start(Files.createTempDirectory("queen-kafka-"), 0, true, overrides);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A throw-away broker of this Kafka whose cluster is formatted at an older {@code metadata.version} ({@code
     * releaseVersion}, e.g. "3.8-IV0", StorageTool's {@code --release-version}): it behaves, and reports itself to clients,
     * as that release until upgraded. CompatibilityMatrixIT shows a service refusing one.
     */
    public static EmbeddedKafkaBroker startTemporaryAtRelease(String releaseVersion) {
        try {
            return start(Files.createTempDirectory("queen-kafka-"), 0, true, Map.of(), "PLAINTEXT",
                    List.of("--release-version", releaseVersion));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A throw-away broker whose one client listener requires SASL_SSL with SCRAM-SHA-512: TLS with the key and
     * certificate chain in {@code keyStore} (PKCS12; it also holds the CA the broker trusts when it connects to
     * itself), and the SCRAM users {@code users} (name to password), created when the storage is formatted as
     * KRaft does it, before the broker starts. {@code interBrokerUser} (one of them) is the broker's own login on
     * that listener. The controller listener stays plaintext on 127.0.0.1: it serves no client request.
     */
    public static EmbeddedKafkaBroker startSaslSsl(Path keyStore, String keyStorePassword, Map<String, String> users,
                                                   String interBrokerUser) {
        Map<String, String> o = new java.util.HashMap<>();
        o.put("sasl.enabled.mechanisms", "SCRAM-SHA-512");
        o.put("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512");
        o.put("listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule"
                + " required username=\"" + interBrokerUser + "\" password=\"" + users.get(interBrokerUser) + "\";");
        o.put("ssl.keystore.type", "PKCS12");
        o.put("ssl.keystore.location", keyStore.toString());
        o.put("ssl.keystore.password", keyStorePassword);
        o.put("ssl.key.password", keyStorePassword);
        o.put("ssl.truststore.type", "PKCS12");
        o.put("ssl.truststore.location", keyStore.toString());
        o.put("ssl.truststore.password", keyStorePassword);
        List<String> format = new ArrayList<>();
        users.forEach((name, password) -> {
            format.add("--add-scram");
            format.add("SCRAM-SHA-512=[name=" + name + ",password=" + password + "]");
        });
        try {
            return start(Files.createTempDirectory("queen-kafka-"), 0, true, o, "SASL_SSL", format);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Starts a broker that keeps its data in {@code logDir} (formatted on first use).
     *
     * @param port the client port, or 0 for a free one
     */
    public static EmbeddedKafkaBroker start(Path logDir, int port, boolean deleteOnClose) {
        return start(logDir, port, deleteOnClose, Map.of());
    }

    /** As {@link #start(Path, int, boolean)}, with server settings overridden by {@code overrides} (the fault harness's broker). */
    public static EmbeddedKafkaBroker start(Path logDir, int port, boolean deleteOnClose, Map<String, String> overrides) {
        return start(logDir, port, deleteOnClose, overrides, "PLAINTEXT", List.of());
    }

    private static EmbeddedKafkaBroker start(Path logDir, int port, boolean deleteOnClose, Map<String, String> overrides,
                                             String protocol, List<String> formatArgs) {
        int brokerPort = port == 0 ? freePort() : port;
        int controllerPort = freePort();
        Properties props = new Properties();
        props.put("process.roles", "broker,controller");
        props.put("node.id", "1");
        props.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        props.put("listeners", protocol + "://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
        props.put("advertised.listeners", protocol + "://127.0.0.1:" + brokerPort);
        props.put("controller.listener.names", "CONTROLLER");
        props.put("inter.broker.listener.name", protocol);
        props.put("listener.security.protocol.map", protocol + ":" + protocol + ",CONTROLLER:PLAINTEXT");
        props.put("log.dirs", logDir.toString());
        props.put("offsets.topic.replication.factor", "1");
        props.put("offsets.topic.num.partitions", "4");
        props.put("transaction.state.log.replication.factor", "1");
        props.put("transaction.state.log.min.isr", "1");
        props.put("transaction.state.log.num.partitions", "4");
        props.put("share.coordinator.state.topic.replication.factor", "1");
        props.put("share.coordinator.state.topic.min.isr", "1");
        props.put("group.initial.rebalance.delay.ms", "0");
        props.put("num.partitions", "1");
        props.put("auto.create.topics.enable", "true");
        // Without this the cleaner allocates 128 MiB up front, which alone kills a small test heap.
        props.put("log.cleaner.dedupe.buffer.size", "2097152");
        props.put("log.flush.interval.messages", Long.toString(Long.MAX_VALUE));
        props.putAll(overrides);
        try {
            Files.createDirectories(logDir);
            if (!Files.exists(logDir.resolve("meta.properties"))) {
                Path config = Files.createTempFile("queen-kafka-", ".properties");
                try (OutputStream out = Files.newOutputStream(config)) {
                    props.store(out, "queen-timers embedded broker");
                }
                List<String> args = new ArrayList<>(List.of("format", "-t", Uuid.randomUuid().toString(), "-c", config.toString()));
                args.addAll(formatArgs);
                int rc = StorageTool.execute(args.toArray(String[]::new), new PrintStream(OutputStream.nullOutputStream()));
                Files.deleteIfExists(config);
                if (rc != 0) {
                    throw new IllegalStateException("kafka storage format failed with code " + rc + " for " + logDir);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        KafkaRaftServer server = new KafkaRaftServer(new KafkaConfig(props, false), Time.SYSTEM);
        server.startup();
        awaitPort(brokerPort);
        return new EmbeddedKafkaBroker(server, "127.0.0.1:" + brokerPort, logDir, deleteOnClose);
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
        if (deleteOnClose) {
            TempDirs.delete(logDir);
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void awaitPort(int port) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        throw new IllegalStateException("embedded kafka did not open port " + port + " within 30 s");
    }
}
