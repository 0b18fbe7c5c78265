package io.queen.timers.cli;

import io.queen.timers.core.text.Printable;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.verdict.CommandSender;
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
        TimerCommand command = TimerCommand.of(op, target.queue, target.timerKey).partition(partition).txn(effectiveTxn).payload(payload);
        if (delayMs != null) {
            command.delay(Duration.ofMillis(delayMs));
        } else {
            command.at(deliverAt);
        }
        return Sent.print(root, spec, output, kafka, target, command, whenText + ", txn " + effectiveTxn);
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
                         TimerCommand command, String detail) {
            String op = command.op().wireName();
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
            try (CommandSender waiter = wait == null ? null : verdicts(props, target.auditTopic(root.env()))) {
                RecordMetadata md = Producing.send(props, command.auth(target.token(root.env())).envelope(topic));
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
                Optional<AuditEvent.Verdict> verdict = waiter.await(md, wait);
                if (verdict.isEmpty()) {
                    output.print(spec.commandLine().getOut(), sent, f);
                    throw new IllegalStateException("no verdict on " + target.auditTopic(root.env()) + " within " + target.wait
                            + " (is a bridge consuming " + topic + "?)");
                }
                AuditEvent.Verdict v = verdict.get();
                String type = v.type().wireName();
                String reason = v instanceof AuditEvent.Rejected r ? r.reason().wireName() : null;
                String deliverAt = v instanceof AuditEvent.Scheduled s ? s.deliverAt().toString()
                        : v instanceof AuditEvent.Rescheduled s ? s.deliverAt().toString() : null;
                f.put("verdict", type);
                if (reason != null) {
                    f.put("reason", reason);
                }
                if (deliverAt != null) {
                    f.put("deliverAt", deliverAt);
                }
                output.print(spec.commandLine().getOut(), sent + "\nverdict: " + type
                        + (reason != null ? " (" + reason + ")" : "")
                        + (deliverAt != null ? ", deliver at " + deliverAt : ""), f);
                // a refusal is a failure for a script; absent (no longer pending) and the others are answers
                return v instanceof AuditEvent.Rejected || v instanceof AuditEvent.TooLate ? 1 : 0;
            }
        }
    
        /** The verdict reader, opened at the audit topic's end before the command is sent. */
        private static CommandSender verdicts(Map<String, Object> props, String auditTopic) {
            try {
                return new CommandSender(props, auditTopic);
            } catch (IllegalArgumentException e) {
                throw new UserError(e.getMessage() + " (set --audit-topic or QUEEN_AUDIT_TOPIC)");
            }
        }
    }
}
