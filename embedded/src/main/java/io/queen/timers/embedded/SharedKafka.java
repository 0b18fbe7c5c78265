package io.queen.timers.embedded;

/**
 * The one Kafka broker of this JVM's tests, where every test class (every test stack) makes topics of its own: the
 * broker {@code QUEEN_TEST_KAFKA} names (bootstrap servers, PLAINTEXT), else an in-process single-node KRaft broker
 * ({@link EmbeddedKafkaBroker}) started at the first call and stopped when the JVM exits.
 */
public final class SharedKafka {

    private static String bootstrap;

    private SharedKafka() {}

    public static synchronized String bootstrapServers() {
        if (bootstrap == null) {
            String env = System.getenv("QUEEN_TEST_KAFKA");
            String origin;
            if (env != null && !env.isBlank()) {
                bootstrap = env;
                origin = "ENV";
            } else {
                EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.startTemporary();
                Runtime.getRuntime().addShutdownHook(new Thread(broker::close, "shared-kafka-stop"));
                bootstrap = broker.bootstrapServers();
                origin = "EMBEDDED";
            }
            System.out.println("[queen-testkit] Kafka: " + origin + " " + bootstrap);
        }
        return bootstrap;
    }
}
