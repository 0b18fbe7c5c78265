package io.queen.timers.processes.stack;

import io.queen.timers.processes.Launcher;
import io.queen.timers.processes.ManagedProcess;
import io.queen.timers.processes.PostgresProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * Everything the harness runs as separate processes ({@link Launcher}): PostgreSQL (pg_ctl, fsync off),
 * the Kafka broker (a JVM of its own), 2 bridges and 3 sweepers from the launcher jar, each with a
 * settings file of its own under the work directory. The services' settings are the defaults except where the harness needs faults to
 * bite within seconds instead of minutes (lease, backoff, client timeouts), each said below.
 */
public final class Stack implements AutoCloseable {

    public static final String COMMANDS_A = "faults.commands.a";
    public static final String COMMANDS_B = "faults.commands.b";
    public static final String AUDIT = "queen.timers.audit";
    public static final String TENANT_A = "00000000-0000-0000-0000-000000000001";
    public static final String TENANT_B = "0b0b0b0b-0000-4000-8000-00000000000b";
    public static final String AUDIT_B = AUDIT + "." + TENANT_B;
    /** The sweepers' lease: a pause longer than this lets another sweeper claim the paused one's timers. */
    public static final long LEASE_MS = 3_000;
    /** The sweepers' longest backoff after a failed attempt (default 30 s): the checker's lateness bound adds it per failure. */
    public static final long SWEEPER_BACKOFF_MAX_MS = 1_000;
    /** The bridges' consumer session: a pause longer than this makes the group move its partitions (a zombie). */
    public static final long SESSION_MS = 6_000;
    /** The services' Kafka request timeout: a broker outage longer than this times their clients out. */
    public static final long KAFKA_REQUEST_TIMEOUT_MS = 3_000;
    /**
     * The bridges' statement timeout: 10 s (default 60 s), because the checker's too_late window rests on it (a lock statement
     * that found a timer claimed may have waited this long after the verdict's time); with 60 s a lost cancel of a timer due
     * within a minute passed. Price: a batch slower than 10 s (a loaded machine) or a fire holding its rows past the lock
     * timeout fails and is retried from the stored offsets.
     */
    public static final long BRIDGE_STATEMENT_TIMEOUT_MS = 10_000;
    /** The bridges' lock timeout, below their statement timeout (so a lock wait is reported as one) and above a 4-5 s pause of a fire. */
    public static final long BRIDGE_LOCK_TIMEOUT_MS = 8_000;
    public static final int PAYLOAD_MAX_BYTES = 262_144;
    /**
     * The services' JVMs. C1 only: seven JVMs on two cores restart dozens of times; C2's compile threads would
     * make every start-up (and so every fault) cost several seconds more, and the load here needs no peak speed.
     */
    private static final List<String> SERVICE_JVM = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
    /** The broker JVM: small, serial GC, C1 only (it restarts dozens of times on two shared cores). */
    private static final List<String> BROKER_JVM = List.of("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
    /** The broker's session with its controller (see {@link #brokerSettings()}). */
    public static final long BROKER_SESSION_MS = 1_500;

    private final Path workDir;
    private final Launcher launcher;
    private final Consumer<String> log;
    private final PostgresProcess postgres;
    private final int kafkaPort;
    private ManagedProcess broker;
    private final List<ManagedProcess> bridges = new ArrayList<>();
    private final List<ManagedProcess> sweepers = new ArrayList<>();
    private final List<ManagedProcess> archiveRecorders = new ArrayList<>();
    private Supervisor supervisor;
    private boolean closed;
    /** The service whose wall clock the harness may step ({@link SteppedClock}), and that clock; null: none. */
    private String steppedService;
    private SteppedClock steppedClock;

    /**
     * @param durable PostgreSQL with fsync on, as users run it (the long run, {@code --durable}); off otherwise: the machine
     *                never crashes in a run, only processes do, so fsync adds time and proves nothing more
     */
    public Stack(Path workDir, Path launcherJar, boolean durable, Consumer<String> log) {
        this.workDir = workDir;
        this.launcher = new Launcher(launcherJar);
        this.log = log;
        this.postgres = new PostgresProcess(workDir, Launcher.servicePort(),
                durable ? PostgresProcess.Durability.DURABLE : PostgresProcess.Durability.FSYNC_OFF,
                Map.of("max_connections", "400", "shared_buffers", "128MB", "max_locks_per_transaction", "256"));
        this.kafkaPort = Launcher.servicePort();
    }

    /**
     * The broker's settings over the embedded broker's, where its defaults would make every broker fault cost
     * seconds for nothing. A broker restarted after {@code kill -9} cannot register until its controller (the
     * same restarted JVM) has expired the killed incarnation's session: 9 s by default, then up to one
     * registration retry (2 s) more — 10-11 s of a 14 s restart, measured on a quiet machine (docs/fault-harness.md). A 1.5 s session with 250 ms heartbeats keeps that wait to ~1.5 s.
     */
    static Map<String, String> brokerSettings() {
        return Map.of("broker.session.timeout.ms", Long.toString(BROKER_SESSION_MS), "broker.heartbeat.interval.ms", "250");
    }

    /**
     * Runs {@code service} (e.g. {@code sweeper-3}) with a wall clock the harness can step ({@link #steppedClock()}); call
     * before {@link #startServices}. Needs Debian's libfaketime.
     */
    public Stack withSteppedClock(String service) {
        this.steppedService = service;
        this.steppedClock = new SteppedClock(workDir.resolve("clock-" + service));
        return this;
    }

    /** The stepped service's clock, or null when no service runs with one. */
    public SteppedClock steppedClock() {
        return steppedClock;
    }

    public String steppedService() {
        return steppedService;
    }

    public PostgresProcess postgres() {
        return postgres;
    }

    public ManagedProcess broker() {
        return broker;
    }

    public List<ManagedProcess> bridges() {
        return bridges;
    }

    public List<ManagedProcess> sweepers() {
        return sweepers;
    }

    public List<ManagedProcess> services() {
        List<ManagedProcess> all = new ArrayList<>(bridges);
        all.addAll(sweepers);
        return all;
    }

    public Supervisor supervisor() {
        return supervisor;
    }

    public String bootstrap() {
        return "127.0.0.1:" + kafkaPort;
    }

    /** PostgreSQL, the broker, the schema (the launcher's migrate, as an operator runs it); services come later. */
    public void startInfrastructure() throws InterruptedException {
        log.accept("postgres: initdb + start on port " + postgres.port() + " (" + workDir.resolve("pg-data") + ")");
        postgres.bootstrap();
        // 30 broker kills: each restart is taken over by a JVM started and warmed up while the broker still ran.
        broker = launcher.broker(workDir.resolve("kafka-data"), kafkaPort, BROKER_JVM, brokerSettings(), true, workDir.resolve("logs/broker.log"));
        log.accept("broker: start on port " + kafkaPort + " (" + workDir.resolve("kafka-data") + ")");
        startBroker();
        // as an operator runs it: the owner migrates, and binds the bridges' group to their login with their topics' tenants,
        // read from the bridges' own settings (a least-privilege login may not bind a group itself)
        Path declaration = workDir.resolve("bridge-declaration.properties");
        try (var out = Files.newBufferedWriter(declaration)) {
            bridgeSettings().store(out, "the bridges' settings, as `migrate --config` reads their group and topics");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        launcher.runOnce(List.of("migrate", "--jdbc-url", postgres.jdbcUrl(), "--jdbc-user", "postgres", "--config", declaration.toString(),
                "--bridge-login", BRIDGE_LOGIN), workDir.resolve("logs/migrate.log"));
        // the services run as least-privilege logins, as in production (docs/schema-and-roles.md#database-roles); loopback, no password
        try (Connection c = postgres.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE ROLE " + BRIDGE_LOGIN + " LOGIN IN ROLE queen_bridge");
            st.execute("CREATE ROLE " + SWEEPER_LOGIN + " LOGIN IN ROLE queen_sweeper");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the services' login roles: " + e.getMessage(), e);
        }
    }

    /** The logins the bridges and the sweepers connect as: members of queen_bridge / queen_sweeper, nothing more. */
    static final String BRIDGE_LOGIN = "faults_bridge";
    static final String SWEEPER_LOGIN = "faults_sweeper";

    /** Starts (or restarts) the broker, until its port is open; then its next standby warms up. */
    public void startBroker() throws InterruptedException {
        broker.start();
        try {
            Launcher.awaitPort(kafkaPort, 120_000);
        } finally {
            broker.prepareStandby();
        }
    }

    /**
     * Until the broker answers a metadata request naming a leader for every partition of the command topics:
     * after a fault the partitions come back only once the controller unfences the broker.
     */
    public static void awaitBrokerAnswers(String bootstrap, long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "3000");
        p.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "100");
        try (Admin admin = Admin.create(p)) {
            while (true) {
                try {
                    boolean led = admin.describeTopics(List.of(COMMANDS_A, COMMANDS_B)).allTopicNames().get().values().stream()
                            .flatMap(d -> d.partitions().stream())
                            .allMatch(pi -> pi.leader() != null && !pi.leader().isEmpty());
                    if (led) {
                        return;
                    }
                } catch (ExecutionException notYet) {
                    // fenced, or not answering yet
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("the broker did not name leaders for the command topics within " + timeoutMs / 1000 + " s");
                }
                Thread.sleep(100);
            }
        }
    }

    public void startServices(int bridgeCount, int sweeperCount) throws IOException {
        for (int i = 1; i <= bridgeCount; i++) {
            Properties settings = bridgeSettings();
            // Its own client id, so a fault can tell from the group which member is this bridge (FaultInjector's pause).
            settings.put("kafka.client.id", "bridge-" + i);
            bridges.add(service("bridge", i, settings, withClassArchive(SERVICE_JVM, serviceArchive("bridge"))));
        }
        for (int i = 1; i <= sweeperCount; i++) {
            sweepers.add(service("sweeper", i, sweeperSettings(), withClassArchive(SERVICE_JVM, serviceArchive("sweeper"))));
        }
        recordServiceClassArchives();
        services().forEach(ManagedProcess::start);
        List<ManagedProcess> watched = new ArrayList<>(services());
        watched.add(broker);
        supervisor = new Supervisor(watched, log).start();
    }

    /**
     * CDS class archives of the services, recorded beside their first start: a bridge and a sweeper started
     * with {@code -XX:ArchiveClassesAtExit} (the same settings; no commands yet, so they take nothing from
     * anyone), stopped once they work, so their JVMs write what they loaded. The services' 60 kills restart
     * them with those classes mapped instead of loaded and verified again; a start before the archive is
     * in place (it appears whole, by a rename) runs without it.
     */
    private void recordServiceClassArchives() {
        for (String role : List.of("bridge", "sweeper")) {
            Path recording = workDir.resolve(role + "-classes.jsa.recording");
            List<String> jvm = new ArrayList<>(SERVICE_JVM);
            jvm.addAll(List.of("-XX:ArchiveClassesAtExit=" + recording, "-Xlog:cds=off", "-Xlog:cds+dynamic=off"));
            ManagedProcess p = launcher.service(role, role + "-class-archive", role.equals("bridge") ? bridgeSettings() : sweeperSettings(),
                    workDir.resolve(role + "-class-archive.properties"), jvm, workDir.resolve("logs/" + role + "-class-archive.log"));
            archiveRecorders.add(p);
            p.start();
            Thread t = new Thread(() -> {
                try {
                    boolean up = awaitRunning(p, 300_000);
                    // A stop, then the JVM writes the archive: tens of seconds on a loaded machine.
                    p.stop(180);
                    if (up && Files.isRegularFile(recording)) {
                        Files.move(recording, serviceArchive(role), StandardCopyOption.ATOMIC_MOVE);
                        log.accept(role + ": class archive recorded");
                    } else {
                        log.accept(role + ": no class archive (see logs/" + role + "-class-archive.log); it restarts without one");
                    }
                } catch (IOException | InterruptedException e) {
                    log.accept(role + ": no class archive: " + e);
                }
            }, role + "-class-archive");
            t.setDaemon(true);
            t.start();
        }
    }

    private Path serviceArchive(String role) {
        return workDir.resolve(role + "-classes.jsa");
    }

    /** {@code jvm} plus a CDS archive to map if it exists when the JVM starts (silently none if it does not). */
    private static List<String> withClassArchive(List<String> jvm, Path archive) {
        List<String> all = new ArrayList<>(jvm);
        all.addAll(List.of("-XX:SharedArchiveFile=" + archive, "-Xlog:cds=off", "-Xlog:cds+dynamic=off"));
        return all;
    }

    /** Until every service logged that it runs, so the load and the faults meet a working stack. */
    public void awaitServicesRunning(long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        for (ManagedProcess p : services()) {
            if (!awaitRunning(p, deadline - System.currentTimeMillis())) {
                throw new IllegalStateException(p.name() + " did not start within " + timeoutMs / 1000 + " s (see " + p.logFile() + ")");
            }
        }
    }

    /** The bridges' consumer group (the bridge's default bridge.group.id). */
    public static final String BRIDGE_GROUP = "queen-timers-bridge";

    /** The command-topic partitions each member of the bridges' group holds, by client id ({@code bridge-<n>}). */
    public Map<String, Integer> bridgeAssignments() throws InterruptedException {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "3000");
        Map<String, Integer> held = new LinkedHashMap<>();
        try (Admin admin = Admin.create(p)) {
            admin.describeConsumerGroups(List.of(BRIDGE_GROUP)).all().get().get(BRIDGE_GROUP).members()
                    .forEach(m -> held.merge(m.clientId(), m.assignment().topicPartitions().size(), Integer::sum));
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot describe group " + BRIDGE_GROUP + ": " + e.getCause(), e);
        }
        return held;
    }

    /**
     * What {@code p}'s PostgreSQL connections are doing, one pg_stat_activity line each ({@code state}, and
     * whether a transaction is open): its connections are found by their client ports, read from the
     * process's socket inodes in /proc (Linux), so the answer is about this process and no other.
     */
    public List<String> backendsOf(java.sql.Connection c, ManagedProcess p) throws java.sql.SQLException {
        return backendsAt(c, postgresPortsOf(p));
    }

    /** The client ports of {@code p}'s connections to PostgreSQL (they change only when its pool reconnects). */
    public List<Integer> postgresPortsOf(ManagedProcess p) {
        return ProcSockets.localPortsTo(p.pid(), postgres.port());
    }

    /** {@link #backendsOf} for connections already found by their client ports. */
    public List<String> backendsAt(java.sql.Connection c, List<Integer> ports) throws java.sql.SQLException {
        List<String> out = new ArrayList<>();
        if (ports.isEmpty()) {
            return out;
        }
        try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT state, xact_start IS NOT NULL FROM pg_stat_activity"
                     + " WHERE backend_type = 'client backend' AND client_port = ANY (?)")) {
            ps.setArray(1, c.createArrayOf("int4", ports.toArray()));
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1) + (rs.getBoolean(2) ? " (in a transaction)" : ""));
                }
            }
        }
        return out;
    }

    /** Until this start of {@code p} logged that it runs (ServiceHost's line); false after the timeout. */
    public boolean awaitRunning(ManagedProcess p, long timeoutMs) throws InterruptedException {
        return Launcher.awaitRunning(p, timeoutMs);
    }

    private ManagedProcess service(String role, int n, Properties settings, List<String> jvm) {
        String name = role + "-" + n;
        return launcher.service(role, name, settings, workDir.resolve(name + ".properties"), jvm,
                name.equals(steppedService) ? steppedClock.environment() : Map.of(), workDir.resolve("logs/" + name + ".log"));
    }

    private Properties common() {
        Properties p = new Properties();
        p.putAll(new LinkedHashMap<>(Map.ofEntries(
                Map.entry("jdbc.url", postgres.jdbcUrl()),
                Map.entry("jdbc.pool.size", "5"),
                Map.entry("kafka.bootstrap.servers", bootstrap()),
                Map.entry("http.port", "0"),
                // Outages last seconds here; the default 30 s cap would make every fault cost half a minute.
                Map.entry("db.retry.backoff.max", "2s"),
                Map.entry("audit.topic", AUDIT),
                Map.entry("tenant." + TENANT_B + ".audit.topic", AUDIT_B),
                // Short client timeouts so that a broker outage of a few seconds times the clients out.
                Map.entry("kafka.request.timeout.ms", Long.toString(KAFKA_REQUEST_TIMEOUT_MS)),
                Map.entry("kafka.default.api.timeout.ms", "5000"),
                Map.entry("kafka.delivery.timeout.ms", "8000"),
                Map.entry("kafka.reconnect.backoff.max.ms", "1000"))));
        return p;
    }

    private Properties bridgeSettings() {
        Properties p = common();
        p.put("jdbc.user", BRIDGE_LOGIN);
        p.put("command.topics", COMMANDS_A + "," + COMMANDS_B);
        // Since round 2 a command topic must name its tenant; topic a is the default tenant's, said so.
        p.put("topic." + COMMANDS_A + ".tenant", TENANT_A);
        p.put("topic." + COMMANDS_B + ".tenant", TENANT_B);
        p.put("bridge.payload.max.bytes", Integer.toString(PAYLOAD_MAX_BYTES));
        p.put("bridge.statement.timeout", BRIDGE_STATEMENT_TIMEOUT_MS + "ms");
        p.put("bridge.lock.timeout", BRIDGE_LOCK_TIMEOUT_MS + "ms");
        // the harness's own fresh topics: every command it sent is to be applied, whenever the bridges first join
        p.put("bridge.start.position", "earliest");
        // the generator's series tick every 1-2 s (CommandGenerator#series) so that a run sees many occurrences
        p.put("recurring.min.period", "1s");
        p.put("kafka.session.timeout.ms", Long.toString(SESSION_MS));
        p.put("kafka.heartbeat.interval.ms", "1500");
        return p;
    }

    private Properties sweeperSettings() {
        Properties p = common();
        p.put("jdbc.user", SWEEPER_LOGIN);
        // A lease of 3 s (default 30 s): a SIGSTOP of 4-5 s outlives it, and a killed sweeper's timers come back soon.
        p.put("sweeper.lease", LEASE_MS + "ms");
        // Poisoned timers reach the DLQ after 5 attempts in ~2 s instead of ~30 s.
        p.put("sweeper.backoff.base", "100ms");
        p.put("sweeper.backoff.max", SWEEPER_BACKOFF_MAX_MS + "ms");
        p.put("sweeper.transient.backoff", "500ms");
        // After a PostgreSQL restart the LISTEN connection is gone until re-established: sweep on a short clock.
        p.put("sweeper.idle.max", "2s");
        return p;
    }

    public int kafkaPort() {
        return kafkaPort;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (supervisor != null) {
            supervisor.close();
        }
        List<ManagedProcess> all = new ArrayList<>(services());
        all.addAll(archiveRecorders);
        for (ManagedProcess p : all) {
            try {
                p.retire();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            if (broker != null) {
                broker.retire();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        postgres.stopQuietly();
    }
}
