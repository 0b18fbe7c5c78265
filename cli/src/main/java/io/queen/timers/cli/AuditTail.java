package io.queen.timers.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.audit.AuditEvents;
import io.queen.timers.client.audit.EventType;
import io.queen.timers.core.config.AuditTopics;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.core.text.Printable;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** The audit topic(s) as a consumer reads them: every event parsed by the client ({@link AuditEvents#parse}), filtered. */
@Command(name = "audit", mixinStandardHelpOptions = true,
        description = "The audit stream: verdicts, fires, retries, dead letters, offset moves (docs/formats.md#audit-events-on-the-topic).",
        subcommands = AuditTail.Tail.class)
final class AuditTail implements Runnable {

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** The tenants' audit topics from the services' settings (audit.topic, tenant.<uuid>.audit.topic, audit.tenant.topics). */
    static AuditTopics topics(Map<String, String> env, java.nio.file.Path file, KafkaOptions kafka) {
        ConfigDef def = CommonSettings.definition().select(CommonSettings.AUDIT_TOPIC)
                .include(AuditTopics.definition());
        return AuditTopics.from(ConfigLoader.load(def, file != null ? file : kafka == null ? null : kafka.config, env));
    }

    @Command(name = "tail", mixinStandardHelpOptions = true,
            description = {"Print audit events from a tenant's audit topic, filtered; --follow for more, until Ctrl-C.",
                "Starts --last N records before each partition's end (default 20; --from-beginning for all). One line per event",
                "(time, type, key, what happened); --json prints each event as published. Every event is read by the client's",
                "parser, so an event this version does not know is reported, not hidden."},
            footer = {"", "Examples:", "  queen-timers audit tail --queue orders.reminders --follow",
                "  queen-timers audit tail --type dead_lettered --type dead_letter_removed --from-beginning --json"})
    static final class Tail implements Callable<Integer> {

        @ParentCommand AuditTail audit;
        @Spec CommandSpec spec;
        @Mixin KafkaOptions kafka;
        @Mixin Output output;

        @Option(names = "--topic", paramLabel = "TOPIC", description = "Audit topic (else the tenant's, from the settings).")
        String topic;

        @Option(names = "--tenant", paramLabel = "UUID", defaultValue = CommonSettings.DEFAULT_TENANT,
                description = "Whose audit topic (default: ${DEFAULT-VALUE}).")
        UUID tenant;

        @Option(names = {"-q", "--queue"}, paramLabel = "QUEUE", description = "Only events of this queue.")
        String queue;

        @Option(names = "--type", paramLabel = "TYPE", description = "Only events of this type (repeatable): ${COMPLETION-CANDIDATES}.",
                completionCandidates = Types.class)
        List<String> types;

        @Option(names = {"-f", "--follow"}, description = "Keep reading new events until interrupted.")
        boolean follow;

        @Option(names = "--last", paramLabel = "N", defaultValue = "20", description = "Start N records before the end of each partition (default: ${DEFAULT-VALUE}).")
        long last;

        @Option(names = "--from-beginning", description = "Start at the beginning of each partition instead.")
        boolean fromBeginning;

        static final class Types extends ArrayList<String> {
            Types() {
                super(Arrays.stream(EventType.values()).map(EventType::wireName).toList());
            }
        }

        @Override
        public Integer call() {
            Set<EventType> wanted = types == null ? Set.of() : types.stream().map(t -> EventType.fromWire(t)
                    .orElseThrow(() -> new UserError("--type " + t + " is not an audit event type: one of "
                            + String.join(", ", new Types())))).collect(Collectors.toSet());
            Map<String, String> env = audit.root.env();
            String t = topic != null ? topic : topics(env, null, kafka).topicFor(tenant);
            Map<String, Object> props = new HashMap<>(kafka.clientProps(env, KafkaSettings.Client.CONSUMER));
            props.remove(ConsumerConfig.GROUP_ID_CONFIG); // assigned, never committed: a reader leaves no trace on the broker
            props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            props.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "queen-timers-audit-tail");
            PrintWriter out = spec.commandLine().getOut();
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
                List<PartitionInfo> infos = consumer.partitionsFor(t, Duration.ofSeconds(15));
                if (infos == null || infos.isEmpty()) {
                    throw new UserError("audit topic " + t + " does not exist (yet): nothing was published to it");
                }
                List<TopicPartition> parts = infos.stream().map(i -> new TopicPartition(t, i.partition())).toList();
                consumer.assign(parts);
                Map<TopicPartition, Long> begin = consumer.beginningOffsets(parts, Duration.ofSeconds(15));
                Map<TopicPartition, Long> end = consumer.endOffsets(parts, Duration.ofSeconds(15));
                for (TopicPartition p : parts) {
                    consumer.seek(p, fromBeginning ? begin.get(p) : Math.max(begin.get(p), end.get(p) - Math.max(0, last)));
                }
                while (true) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                        print(out, r, wanted);
                    }
                    if (!follow && parts.stream().allMatch(p -> consumer.position(p) >= end.get(p))) {
                        return 0;
                    }
                    if (Thread.currentThread().isInterrupted()) {
                        return 130;
                    }
                }
            } catch (org.apache.kafka.common.errors.InterruptException e) {
                return 130;
            }
        }

        private void print(PrintWriter out, ConsumerRecord<byte[], byte[]> r, Set<EventType> wanted) {
            JsonNode value;
            AuditEvent event;
            try {
                value = Output.mapper().readTree(r.value());
                event = AuditEvents.parse(value);
            } catch (Exception e) {
                spec.commandLine().getErr().println("warning: " + r.topic() + "[" + r.partition() + "]@" + r.offset()
                        + " is not an audit event this version reads: " + Printable.line(String.valueOf(e.getMessage())));
                return;
            }
            if (!wanted.isEmpty() && !wanted.contains(event.type())) {
                return;
            }
            String q = value.path("queue").isTextual() ? value.get("queue").textValue() : null;
            if (queue != null && !queue.equals(q)) {
                return;
            }
            String key = r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8);
            Map<String, Object> f = Output.mapper().convertValue(value, LinkedHashMap.class);
            output.print(out, event.meta().at() + "  " + event.type().wireName() + "  " + Printable.line(key) + "  " + summary(event), f);
        }

        /** What happened, in a few words per type. */
        private static String summary(AuditEvent e) {
            String s;
            if (e instanceof AuditEvent.Scheduled v) {
                s = "txn " + v.txn() + ", deliver at " + v.deliverAt();
            } else if (e instanceof AuditEvent.Rescheduled v) {
                s = "txn " + v.txn() + ", deliver at " + v.deliverAt();
            } else if (e instanceof AuditEvent.Rejected v) {
                s = v.reason().wireName() + ": " + v.error();
            } else if (e instanceof AuditEvent.Fired v) {
                s = v.partition() + "@" + v.offset() + ", txn " + v.txn() + ", " + v.lateMs() + " ms late" + series(v.occurrence());
            } else if (e instanceof AuditEvent.Retrying v) {
                s = "attempt " + v.attempts() + ": " + v.error();
            } else if (e instanceof AuditEvent.DeadLettered v) {
                s = "after " + v.attempts() + " attempts: " + v.error() + series(v.occurrence());
            } else if (e instanceof AuditEvent.Skipped v) {
                s = "txn " + v.txn() + " not delivered (catchUp none)" + series(v.occurrence());
            } else if (e instanceof AuditEvent.OffsetMoved v) {
                s = v.group() + " " + v.topic() + "/" + v.partition() + " " + v.from() + " -> " + v.to() + " by " + v.by() + ": " + v.reason();
            } else if (e instanceof AuditEvent.DeadLetterRemoved v) {
                s = v.how() + (v.state() == null ? "" : " (" + v.state() + ")") + " by " + v.by() + ": " + v.reason();
            } else {
                s = "";
            }
            return Printable.line(s + (e instanceof AuditEvent.Verdict v ? "  [" + v.source().topic() + "/" + v.source().partition()
                    + "@" + v.source().offset() + "]" : ""));
        }

        /** A recurring timer's place in its series, so a tail shows where the series goes on; empty for a one-shot timer. */
        static String series(AuditEvent.Occurrence o) {
            if (o == null) {
                return "";
            }
            return ", occurrence #" + o.seq() + " " + o.occurrence()
                    + o.skippedRange().map(r -> ", skipped " + r.from() + " .. " + r.to()).orElse("")
                    + o.nextOccurrence().map(n -> ", next " + n).orElse(", series ended");
        }
    }
}
