package io.queen.timers.test;

import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.client.verdict.CommandSender;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.log.read.LogMessage;
import io.queen.timers.log.read.LogReader;
import io.queen.timers.log.read.PartitionInfo;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.stack.Kafka;
import io.queen.timers.stack.Postgres;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.sweeper.SweeperMain;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole queen-timers stack for an integration test, in the test's JVM: a Kafka broker and a PostgreSQL
 * server (embedded, as the {@code local} command runs them, or the ones {@link Options#external} names), the
 * schema, a command and an audit topic of this stack's own, the bridge and the sweeper (each as the services
 * run, as a least-privilege login role). Usable from any framework; {@link QueenTimersExtension} runs one per
 * JUnit 5 test class. {@link #close()} stops everything in reverse order. A thin face of the stack this repository builds
 * everything on ({@link Stack}, module {@code queen-timers-stack}), with what a team's test reads: a sender, the audit
 * events, a queue's log and the clock.
 *
 * <p>Every name the stack makes is its own (topics, the bridge's consumer group, the services' login roles end
 * in a random suffix), so stacks of several test classes may share one external broker and database. They do
 * share the database's queues: give each test its own queue names or keys.
 *
 * <p>PRICE: start-up is about 5–10 s (the embedded servers start side by side; the migration is most of the
 * rest), once per test class; memory is a broker and a server's worth (run the tests with {@code -Xmx512m} or more).
 */
public final class QueenTimersStack implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(QueenTimersStack.class);
    /** The tenant of a command that names none (the default tenant; docs/commands.md). */
    public static final UUID DEFAULT_TENANT = UUID.fromString(CommonSettings.DEFAULT_TENANT);

    /** What to run: embedded servers, or a broker and a PostgreSQL database a test environment provides. */
    public record Options(String bootstrapServers, String jdbcUrl, String jdbcUser, String jdbcPassword) {

        /** An embedded broker and an embedded PostgreSQL, both temporary (removed on close). */
        public static Options embedded() {
            return new Options(null, null, null, null);
        }

        /**
         * A broker ({@code bootstrapServers}, PLAINTEXT) and a database ({@code jdbcUrl}) that are already running.
         * {@code jdbcUser} migrates the schema and owns it (docs/schema-and-roles.md), and needs CREATEROLE: the
         * services run as login roles made for this stack, dropped on close.
         */
        public static Options external(String bootstrapServers, String jdbcUrl, String jdbcUser, String jdbcPassword) {
            return new Options(bootstrapServers, jdbcUrl, jdbcUser, jdbcPassword);
        }
    }

    private final Stack stack;
    private final AuditLog audit;
    private final Clock clock;
    private CommandSender sender;

    private QueenTimersStack(Stack stack) {
        this.stack = stack;
        this.audit = new AuditLog(stack.kafkaSettings(), stack.auditTopic());
        this.clock = new Clock(stack.owner());
    }

    /** Starts a stack; on failure, stops what had started and throws. */
    public static QueenTimersStack start(Options o) {
        Stack stack = Stack.builder()
                .postgres(o.jdbcUrl() == null ? Postgres.embedded() : Postgres.external(o.jdbcUrl(), o.jdbcUser(), o.jdbcPassword()))
                .kafka(o.bootstrapServers() == null ? Kafka.embedded() : Kafka.external(o.bootstrapServers()))
                .migrated()
                // a group of this stack's own, bound by the owner to the bridge's login with its topic's tenant
                .service(BridgeMain.SERVICE, (s, st) -> local(s).set(RouteSettings.COMMAND_TOPICS, List.of(st.commandTopic()))
                        .set(BridgeSettings.GROUP_ID, st.uniqueName("queen-timers-test-"))
                        .set(BridgeSettings.START_POSITION, "earliest"))
                .service(SweeperMain.SERVICE, (s, st) -> local(s))
                .start();
        try {
            return new QueenTimersStack(stack);
        } catch (RuntimeException e) {
            stack.close();
            throw e;
        }
    }

    /** A service's /health and /metrics on the loopback only: a test's stack is nobody else's. */
    private static ServiceSettings local(ServiceSettings s) {
        return s.set(CommonSettings.HTTP_BIND_ADDRESS, "127.0.0.1");
    }

    /** The topic to send commands to (the bridge of this stack consumes it). */
    public String commandTopic() {
        return stack.commandTopic();
    }

    /** The topic the bridge and the sweeper publish this stack's audit events to. */
    public String auditTopic() {
        return stack.auditTopic();
    }

    public String bootstrapServers() {
        return stack.bootstrapServers();
    }

    /** Kafka client settings for this stack's broker: a producer or consumer of the test's own starts from these. */
    public Map<String, Object> kafkaSettings() {
        return stack.kafkaSettings();
    }

    /**
     * A {@link CommandSender} on the command topic's broker, awaiting verdicts on this stack's audit topic; made at the
     * first call, closed with the stack. Not thread-safe (as CommandSender).
     */
    public synchronized CommandSender sender() {
        if (sender == null) {
            sender = new CommandSender(new HashMap<>(kafkaSettings()), auditTopic());
        }
        return sender;
    }

    /** The audit events of this stack, read from the beginning of its audit topic. */
    public AuditLog audit() {
        return audit;
    }

    /**
     * The messages of {@code queue} (default tenant) in the log, as a Queen consumer reads them: every partition,
     * each in offset order (partitions by name), with message id, txn and payload. Empty when the queue does not
     * exist yet (a queue is made at its first fire).
     */
    public List<LogMessage> log(String queue) {
        return log(DEFAULT_TENANT, queue);
    }

    /** As {@link #log(String)}, for the queue of {@code tenant}. */
    public List<LogMessage> log(UUID tenant, String queue) {
        LogReader reader = new LogReader(stack.owner());
        List<LogMessage> out = new ArrayList<>();
        try {
            List<PartitionInfo> parts = new ArrayList<>(reader.partitions(tenant, queue));
            parts.sort(java.util.Comparator.comparing(PartitionInfo::name));
            for (PartitionInfo p : parts) {
                long from = 0;
                while (from <= p.lastOffset()) {
                    List<LogMessage> page = reader.read(tenant, queue, p.name(), from, 1000);
                    if (page.isEmpty()) {
                        break;
                    }
                    out.addAll(page);
                    from = page.get(page.size() - 1).offset() + 1;
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the log of " + queue + ": " + e.getMessage(), e);
        }
        return out;
    }

    /** The tests' clock of this stack: {@link Clock#fireDue} and {@link Clock#advance}. */
    public Clock clock() {
        return clock;
    }

    /** Shorthand for {@code clock().fireDue(queue)}: the queue's staged timers fire now; returns once they fired. */
    public List<Clock.Moved> fireDue(String queue) {
        return clock.fireDue(queue);
    }

    /** A pool on the stack's database as the schema's owner, for a test's own reads. Closed with the stack. */
    public javax.sql.DataSource ownerDataSource() {
        return stack.owner();
    }

    @Override
    public synchronized void close() {
        for (AutoCloseable c : new AutoCloseable[] {sender, audit}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    LOG.warn("stopping {} failed: {}", c.getClass().getSimpleName(), e.toString());
                }
            }
        }
        stack.close();
    }
}
