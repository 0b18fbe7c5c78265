package io.queen.timers.cli;

import io.queen.timers.core.text.Printable;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.bridge.wire.CommandJson;
import io.queen.timers.bridge.wire.Op;
import io.queen.timers.core.config.ConfigDef;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.producer.RecordMetadata;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** Produces one schedule (or reschedule) command. The verdict arrives on the audit topic. */
@Command(name = "schedule", mixinStandardHelpOptions = true,
        description = {"Publish one schedule (or --reschedule) command.",
            "The bridge's verdict (scheduled, rescheduled, too_late, rejected) is published on the audit topic."},
        footer = {"", "Example:",
            "  queen-timers schedule -q orders.reminders -k order-42 --delay 30s --payload '{\"orderId\":42}'"})
final class ScheduleCommand implements Callable<Integer> {

    static final class When {
        @Option(names = "--delay", paramLabel = "DURATION", description = "Fire this long after the record's timestamp: 500ms, 30s, 10m, 2h, 7d.")
        String delay;

        @Option(names = "--at", paramLabel = "INSTANT", description = "Fire at this ISO-8601 instant with offset, e.g. 2026-12-24T18:00:00+01:00.")
        String at;
    }

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;
    @Mixin CommandTarget target;
    @Mixin KafkaOptions kafka;
    @Mixin Output output;

    @ArgGroup(exclusive = true, multiplicity = "1")
    When when;

    @Option(names = "--txn", paramLabel = "TXN", description = "Transaction id the fired message carries (default: the timer key).")
    String txn;

    @Option(names = {"-p", "--payload"}, paramLabel = "JSON", defaultValue = "{}", description = "The message payload, any JSON value (default: ${DEFAULT-VALUE}).")
    String payload;

    @Option(names = "--partition", paramLabel = "NAME", description = "Destination partition of the queue (default: Default).")
    String partition;

    @Option(names = "--reschedule", description = "Send op=reschedule (same upsert; the audit verdict says rescheduled).")
    boolean reschedule;

    @Override
    public Integer call() {
        Op op = reschedule ? Op.RESCHEDULE : Op.SCHEDULE;
        Long delayMs = null;
        Instant deliverAt = null;
        String whenText;
        if (when.delay != null) {
            try {
                delayMs = ConfigDef.parseDuration(when.delay).toMillis();
            } catch (RuntimeException e) {
                throw new UserError("--delay '" + when.delay + "': " + e.getMessage());
            }
            whenText = "in " + when.delay;
        } else {
            try {
                deliverAt = OffsetDateTime.parse(when.at).toInstant();
            } catch (DateTimeParseException e) {
                throw new UserError("--at '" + when.at + "' is not an ISO-8601 instant with offset (e.g. 2026-12-24T18:00:00Z)");
            }
            whenText = "at " + when.at;
        }
        String effectiveTxn = txn == null ? target.timerKey : txn;
        parsePayload(payload);
        byte[] value = CommandJson.encode(op, target.queue, target.timerKey, partition, delayMs, deliverAt, effectiveTxn, payload);
        return Sent.print(root, spec, output, kafka, target, op.wireName(), value, whenText + ", txn " + effectiveTxn);
    }

    static JsonNode parsePayload(String text) {
        try {
            return Output.mapper().readTree(text);
        } catch (JsonProcessingException e) {
            throw new UserError("--payload is not JSON: " + e.getOriginalMessage());
        }
    }

    /** Sends and prints where the record went. */
    static final class Sent {
        private Sent() {}

        static int print(QueenTimers root, CommandSpec spec, Output output, KafkaOptions kafka, CommandTarget target,
                         String op, byte[] value, String detail) {
            String topic = target.topic(root.env());
            Map<String, Object> props = kafka.clientProps(root.env());
            Duration wait = null;
            if (target.wait != null) {
                try {
                    wait = ConfigDef.parseDuration(target.wait);
                } catch (RuntimeException e) {
                    throw new UserError("--wait '" + target.wait + "': " + e.getMessage());
                }
            }
            try (VerdictWaiter waiter = wait == null ? null : new VerdictWaiter(props, target.auditTopic(root.env()))) {
                RecordMetadata md = Producing.send(props, topic, target.recordKey(), value, target.token(root.env()));
                Map<String, Object> f = new LinkedHashMap<>();
                f.put("op", op);
                f.put("queue", target.queue);
                f.put("timerKey", target.timerKey);
                f.put("topic", md.topic());
                f.put("partition", md.partition());
                f.put("offset", md.offset());
                String sent = Printable.line("sent " + op + " " + target.recordKey() + (detail.isEmpty() ? "" : " (" + detail + ")")
                        + " to " + md.topic() + "[" + md.partition() + "]@" + md.offset());
                if (waiter == null) {
                    output.print(spec.commandLine().getOut(), sent + "; the verdict comes on the audit topic", f);
                    return 0;
                }
                Optional<JsonNode> verdict = waiter.await(md, wait);
                if (verdict.isEmpty()) {
                    output.print(spec.commandLine().getOut(), sent, f);
                    throw new IllegalStateException("no verdict on " + target.auditTopic(root.env()) + " within " + target.wait
                            + " (is a bridge consuming " + topic + "?)");
                }
                JsonNode v = verdict.get();
                String type = v.path("type").asText();
                f.put("verdict", type);
                if (v.hasNonNull("reason")) {
                    f.put("reason", v.path("reason").asText());
                }
                if (v.hasNonNull("deliverAt")) {
                    f.put("deliverAt", v.path("deliverAt").asText());
                }
                output.print(spec.commandLine().getOut(), sent + "\nverdict: " + type
                        + (v.hasNonNull("reason") ? " (" + v.path("reason").asText() + ")" : "")
                        + (v.hasNonNull("deliverAt") ? ", deliver at " + v.path("deliverAt").asText() : ""), f);
                // a refusal is a failure for a script; absent (no longer pending) and the others are answers
                return type.equals("rejected") || type.equals("too_late") ? 1 : 0;
            }
        }
    }
}
