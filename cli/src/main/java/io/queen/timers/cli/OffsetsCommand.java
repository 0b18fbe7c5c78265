package io.queen.timers.cli;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.bridge.ingest.OffsetStore;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.text.Printable;
import io.queen.timers.inspect.StoredOffsets;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.common.KafkaException;
import java.net.InetAddress;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** The bridge's stored offsets (queen.bridge_offsets), which only an operator moves, on purpose. */
@Command(name = "offsets", mixinStandardHelpOptions = true,
        description = "The bridge's stored positions in the command topics (queen.bridge_offsets).",
        subcommands = {OffsetsCommand.Get.class, OffsetsCommand.Set.class})
final class OffsetsCommand implements Runnable {

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** The stored offsets, beside the broker's log start and end: what the bridge has applied, and how far behind it is. */
    @Command(name = "get", mixinStandardHelpOptions = true,
            description = {"The bridge's stored offsets per group, topic and partition (the next record each applies), beside the",
                "broker's log start and end and the lag (end - stored). A stored offset outside [start, end] stops that",
                "partition (see offsets set). --no-kafka reads the database only."},
            footer = {"", "Example:", "  queen-timers offsets get --group queen-timers-bridge"})
    static final class Get implements Callable<Integer> {

        @ParentCommand OffsetsCommand offsets;
        @Spec CommandSpec spec;
        @Mixin DatabaseOptions db;
        @Mixin KafkaOptions kafka;
        @Mixin Output output;

        @Option(names = "--group", paramLabel = "GROUP", description = "Only this bridge group (default: every group).")
        String group;

        @Option(names = "--topic", paramLabel = "TOPIC", description = "Only this command topic.")
        String topic;

        @Option(names = "--no-kafka", description = "Do not ask the broker for the log start and end.")
        boolean noKafka;

        @Override
        public Integer call() throws SQLException {
            Map<String, String> env = offsets.root.env();
            List<StoredOffsets.Stored> stored;
            try (HikariDataSource ds = db.open(env, SessionTimeouts.OPERATOR.named("queen-offsets"))) {
                stored = new StoredOffsets(ds).read(group, topic);
            }
            List<StoredOffsets.Row> rows = StoredOffsets.alone(stored);
            if (!noKafka) {
                try {
                    rows = StoredOffsets.withBroker(stored, kafka.clientProps(env, KafkaSettings.Client.CONSUMER), Duration.ofSeconds(15));
                } catch (KafkaException e) {
                    spec.commandLine().getErr().println("warning: the broker's offsets are not shown: " + Errors.describe(e));
                }
            }
            PrintWriter out = spec.commandLine().getOut();
            for (StoredOffsets.Row row : rows) {
                StoredOffsets.Stored r = row.stored();
                Long s = row.logStart();
                Long e = row.logEnd();
                output.print(out, "group " + Printable.line(r.group()) + "  " + Printable.line(r.topic()) + "/" + r.partition()
                        + "  stored " + r.next() + (e == null ? "" : "  log [" + s + ", " + e + ")  lag " + row.lag()
                        + (Boolean.FALSE.equals(row.inRange()) ? "  OUT OF RANGE: this partition is stopped (offsets set)" : ""))
                        + "  updated " + r.updatedAt(), row.fields());
            }
            if (rows.isEmpty() && !output.json()) {
                out.println("no stored offsets" + (group == null ? "" : " for group " + Printable.line(group)));
                out.flush();
            }
            return 0;
        }
    }

    /** Sets one partition's stored offset, with a reason, as an audit event. */
    @Command(name = "set", mixinStandardHelpOptions = true,
            description = {"Set a bridge group's stored offset of one command partition, on purpose.",
                "The bridge never resets an offset on its own: a stored offset outside the log (topic recreated,",
                "retention passed it) stops that partition until this sets it. Every record between the old and",
                "the new offset gets no verdict: that is the decision this records, as an offset_moved audit event",
                "with your reason, to the audit topic of the tenant that owns the topic; the database records who (its",
                "session user and your address). A running bridge seeks to the new offset by itself.",
                "Moving a stored offset backwards is refused unless --replay: every record in between is applied again,",
                "and each schedule whose timer already fired or was cancelled is staged and fires a second time."},
            footer = {"", "Example:", "  queen-timers offsets set --topic queen.timers.commands --partition 3 --offset 1200 \\",
                "      --reason 'retention deleted 1000..1199 while the database was restored'"})
    static final class Set implements Callable<Integer> {

        @ParentCommand OffsetsCommand offsets;
        @Spec CommandSpec spec;
        @Mixin DatabaseOptions db;
        @Mixin Output output;

        @Option(names = "--group", paramLabel = "GROUP", description = "Bridge consumer group (else QUEEN_BRIDGE_GROUP_ID, else queen-timers-bridge).")
        String group;

        @Option(names = "--topic", required = true, paramLabel = "TOPIC", description = "Command topic.")
        String topic;

        @Option(names = "--partition", required = true, paramLabel = "N", description = "Kafka partition of the topic.")
        int partition;

        @Option(names = "--offset", required = true, paramLabel = "OFFSET", description = "The next offset the bridge applies (>= 0).")
        long offset;

        @Option(names = "--reason", required = true, paramLabel = "TEXT", description = "Why: written into the offset_moved audit event.")
        String reason;

        @Option(names = "--replay", description = "Allow moving a stored offset backwards: the records in between are applied again"
                + " (fired or cancelled timers among them fire again).")
        boolean replay;

        @Option(names = "--tenant", paramLabel = "UUID", description = "Tenant that owns the topic: needed only when no bridge of the"
                + " group registered it (a bridge registers its topics at start); otherwise it must agree.")
        UUID tenant;

        @Override
        public Integer call() throws SQLException {
            if (offset < 0 || partition < 0) {
                throw new UserError("--offset and --partition must be >= 0");
            }
            if (reason.isBlank()) {
                throw new UserError("--reason must say why the offset moves");
            }
            Map<String, String> env = offsets.root.env();
            ConfigDef.Key groupKey = BridgeSettings.definition().key(BridgeSettings.GROUP_ID);
            String g = group != null ? group : env.getOrDefault(groupKey.env(), groupKey.defaultValue());
            try (HikariDataSource ds = db.open(env, SessionTimeouts.OPERATOR.named("queen-offsets"))) {
                OffsetStore.Moved moved;
                try {
                    moved = new OffsetStore(ds, g).move(topic, partition, offset, reason, replay, tenant, clientLabel());
                } catch (SQLException e) {
                    // the database's refusals (a backward move without --replay, an unknown tenant) are the operator's to read
                    if ("55000".equals(e.getSQLState()) || "22023".equals(e.getSQLState())) {
                        String m = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
                        throw new UserError(m.startsWith("ERROR: ") ? m.substring("ERROR: ".length()) : m);
                    }
                    throw e;
                }
                Long previous = moved.previous();
                Map<String, Object> f = new LinkedHashMap<>();
                f.put("group", g);
                f.put("topic", topic);
                f.put("partition", partition);
                f.put("from", previous);
                f.put("to", offset);
                f.put("reason", reason);
                f.put("replay", previous != null && offset < previous);
                f.put("tenant", moved.tenant().toString());
                output.print(spec.commandLine().getOut(), "group " + Printable.line(g) + ": " + Printable.line(topic) + "/" + partition
                        + " moved from " + (previous == null ? "(none stored)" : previous) + " to " + offset
                        + (previous != null && offset < previous ? " (replaying " + (previous - offset) + " offsets)" : "")
                        + "; audit event offset_moved written for tenant " + moved.tenant(), f);
                return 0;
            }
        }

        /** The client's own claim of who runs it, kept beside the actor the database records (its session user and our address). */
        private static String clientLabel() {
            String host;
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (Exception e) {
                host = "unknown-host";
            }
            return System.getProperty("user.name", "unknown") + "@" + host + " (queen-timers offsets set)";
        }
    }
}
