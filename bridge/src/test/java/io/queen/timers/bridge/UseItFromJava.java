package io.queen.timers.bridge;

import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.verdict.CommandSender;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;

/** README "Use it from Java", verbatim: ReadmeJavaExampleIT compares this file with the README and runs it. */
final class UseItFromJava {

    static AuditEvent.Verdict remindLater(String bootstrap, String commandTopic, String auditTopic) {
        try (CommandSender sender = new CommandSender(Map.of("bootstrap.servers", bootstrap), auditTopic)) {
            ProducerRecord<byte[], byte[]> schedule = TimerCommand.schedule("orders.reminders", "order-42")
                    .delay(Duration.ofMinutes(30))
                    .txn("remind-order-42")
                    .payload("{\"orderId\":42}")
                    .envelope(commandTopic);           // or .headers(commandTopic): the same command as headers
            AuditEvent.Verdict verdict = sender.sendAndAwait(schedule, Duration.ofSeconds(30));
            if (verdict instanceof AuditEvent.Scheduled s) {
                System.out.println("message " + s.messageId() + " arrives at " + s.deliverAt());
            }
            return verdict;
        }
    }
}
