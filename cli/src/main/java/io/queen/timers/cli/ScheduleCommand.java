package io.queen.timers.cli;

import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.text.Printable;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.command.CatchUp;
import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.verdict.CommandSender;
import io.queen.timers.core.config.ConfigDef;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.time.OffsetDateTime;
import java.time.ZoneId;
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
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** Produces one schedule (or reschedule) command. The verdict arrives on the audit topic. */
@Command(name = "schedule", mixinStandardHelpOptions = true,
        description = {"Publish one schedule (or --reschedule) command.",
            "The bridge's verdict (scheduled, rescheduled, too_late, rejected) is published on the audit topic."},
        footer = {"", "Examples:",
            "  queen-timers schedule -q orders.reminders -k order-42 --delay 30s --payload '{\"orderId\":42}'",
            "  queen-timers schedule -q reports -k nightly --cron '30 2 * * *' --zone Europe/Berlin --catch-up none"})
final class ScheduleCommand implements Callable<Integer> {

    static final class When {
        @Option(names = "--delay", paramLabel = "DURATION", description = "Fire this long after the record's timestamp: 500ms, 30s, 10m, 2h, 7d.")
        String delay;

        @Option(names = "--at", paramLabel = "INSTANT", description = "Fire at this ISO-8601 instant with offset, e.g. 2026-12-24T18:00:00+01:00.")
        String at;

        // the rules of a recurring timer are two more kinds of time, in the same group: picocli refuses any two together
        @Option(names = "--cron", paramLabel = "EXPR", description = "Recur at every instant the cron expression names: 5 fields (minute hour day month weekday) or 6 (seconds first).")
        String cron;

        @Option(names = "--every", paramLabel = "DURATION", description = "Recur every DURATION (at least 1s; a day is 24 h): 30s, 10m, 1h, 1d or ISO-8601 (PT1H).")
        String every;
    }

    /** The rest of a recurring timer (docs/commands.md#recurring-timers): valid with --cron or --every only, checked in {@link #command()}. */
    static final class Recurrence {
        @Option(names = "--zone", paramLabel = "ZONE", description = "With --cron: the IANA zone it is read in (default UTC), e.g. Europe/Berlin.")
        String zone;

        @Option(names = "--start-at", paramLabel = "INSTANT", description = "With --cron/--every: the first occurrence is at or after this ISO-8601 instant with offset (default: now).")
        String startAt;

        @Option(names = "--end-at", paramLabel = "INSTANT", description = "With --cron/--every: no occurrence after this ISO-8601 instant with offset.")
        String endAt;

        @Option(names = "--max-occurrences", paramLabel = "N", description = "With --cron/--every: end the series after N deliveries.")
        Integer maxOccurrences;

        @Option(names = "--catch-up", paramLabel = "POLICY", description = "With --cron/--every, after an outage: one (default; one late fire, then on), all (each missed one, at most 100) or none (skip them).")
        String catchUp;

        boolean any() {
            return zone != null || startAt != null || endAt != null || maxOccurrences != null || catchUp != null;
        }
    }

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;
    @Mixin CommandTarget target;
    @Mixin KafkaOptions kafka;
    @Mixin Output output;

    @ArgGroup(exclusive = true, multiplicity = "1")
    When when;

    @ArgGroup(exclusive = false, multiplicity = "0..1", heading = "Recurring timer (docs/commands.md#recurring-timers), with --cron or --every:%n")
    Recurrence recurrence;

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
        TimerCommand command = command();
        return Sent.print(root, spec, output, kafka, target, command, whenText() + ", txn " + effectiveTxn());
    }

    /** The command the options describe, checked as far as the CLI can (the bridge judges the rest): nothing is sent. */
    TimerCommand command() {
        Op op = reschedule ? Op.RESCHEDULE : Op.SCHEDULE;
        parsePayload(payload);
        TimerCommand command = TimerCommand.of(op, target.queue, target.timerKey).partition(partition).txn(effectiveTxn()).payload(payload);
        Recurrence r = recurrence == null ? new Recurrence() : recurrence;
        // a usage mistake like --delay with --at, so the same exit code (2): the bridge would answer bad_rule
        if (when.cron == null && when.every == null && r.any()) {
            throw new ParameterException(spec.commandLine(),
                    "--zone, --start-at, --end-at, --max-occurrences and --catch-up go with --cron or --every only");
        }
        if (when.cron == null && r.zone != null) {
            throw new ParameterException(spec.commandLine(), "--zone goes with --cron only (an --every period is elapsed time, in no zone)");
        }
        if (when.delay != null) {
            command.delay(duration("--delay", when.delay));
        } else if (when.at != null) {
            command.at(instant("--at", when.at));
        } else if (when.cron != null) {
            if (r.zone == null) {
                command.cron(when.cron);
            } else {
                try {
                    command.cron(when.cron, ZoneId.of(r.zone));
                } catch (DateTimeException e) {
                    throw new UserError("--zone '" + r.zone + "' is not a zone id (e.g. Europe/Berlin): " + e.getMessage());
                }
            }
        } else {
            command.every(duration("--every", when.every));
        }
        if (r.startAt != null) {
            command.startAt(instant("--start-at", r.startAt));
        }
        if (r.endAt != null) {
            command.endAt(instant("--end-at", r.endAt));
        }
        if (r.maxOccurrences != null) {
            command.maxOccurrences(r.maxOccurrences);
        }
        if (r.catchUp != null) {
            command.catchUp(CatchUp.fromWire(r.catchUp)
                    .orElseThrow(() -> new UserError("--catch-up '" + r.catchUp + "' is not one, all or none")));
        }
        return command;
    }

    private String effectiveTxn() {
        return txn == null ? target.timerKey : txn;
    }

    private String whenText() {
        if (when.delay != null) {
            return "in " + when.delay;
        }
        if (when.at != null) {
            return "at " + when.at;
        }
        if (when.cron != null) {
            return "cron '" + when.cron + "'" + (recurrence == null || recurrence.zone == null ? "" : " in " + recurrence.zone);
        }
        return "every " + when.every;
    }

    private static Duration duration(String option, String text) {
        try {
            return ConfigDef.parseDuration(text);
        } catch (RuntimeException e) {
            throw new UserError(option + " '" + text + "': " + e.getMessage());
        }
    }

    private static Instant instant(String option, String text) {
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException e) {
            throw new UserError(option + " '" + text + "' is not an ISO-8601 instant with offset (e.g. 2026-12-24T18:00:00Z)");
        }
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
            Map<String, Object> props = kafka.clientProps(root.env(), KafkaSettings.Client.PRODUCER);
            Duration wait = null;
            if (target.wait != null) {
                try {
                    wait = ConfigDef.parseDuration(target.wait);
                } catch (RuntimeException e) {
                    throw new UserError("--wait '" + target.wait + "': " + e.getMessage());
                }
            }
            try (CommandSender waiter = wait == null ? null : verdicts(kafka.clientProps(root.env(), KafkaSettings.Client.CONSUMER),
                    target.auditTopic(root.env()))) {
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
