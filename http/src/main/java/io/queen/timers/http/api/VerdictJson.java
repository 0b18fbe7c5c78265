package io.queen.timers.http.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.verdict.CommandSender;

/** One operation's answer: its verdict's fields as the audit event names them, and where its command was written. */
final class VerdictJson {

    private VerdictJson() {}

    static void write(ObjectNode n, CommandSender.Answer a) {
        n.putObject("source").put("topic", a.sent().topic()).put("partition", a.sent().partition()).put("offset", a.sent().offset());
        if (a.verdict().isEmpty()) {
            n.put("type", "pending"); // written; its verdict will be on the audit topic, keyed by source
            return;
        }
        AuditEvent.Verdict v = a.verdict().get();
        n.put("type", v.type().wireName());
        n.put("eventId", v.meta().eventId().toString());
        if (v instanceof AuditEvent.Rejected r) {
            n.put("reason", r.reason().wireName());
            n.put("error", r.error());
        } else if (v instanceof AuditEvent.Scheduled s) {
            timer(n, s.queue(), s.timerKey(), s.op().wireName()).put("partition", s.partition()).put("txn", s.txn())
                    .put("messageId", s.messageId().toString()).put("deliverAt", String.valueOf(s.deliverAt()));
        } else if (v instanceof AuditEvent.Rescheduled s) {
            timer(n, s.queue(), s.timerKey(), s.op().wireName()).put("partition", s.partition()).put("txn", s.txn())
                    .put("messageId", s.messageId().toString()).put("deliverAt", String.valueOf(s.deliverAt()));
        } else if (v instanceof AuditEvent.Cancelled c) {
            timer(n, c.queue(), c.timerKey(), c.op().wireName()).put("messageId", c.messageId().toString());
        } else if (v instanceof AuditEvent.TooLate t) {
            timer(n, t.queue(), t.timerKey(), t.op().wireName()).put("messageId", t.messageId().toString());
        } else if (v instanceof AuditEvent.Absent x) {
            timer(n, x.queue(), x.timerKey(), x.op().wireName());
        }
    }

    private static ObjectNode timer(ObjectNode n, String queue, String timerKey, String op) {
        return n.put("op", op).put("queue", queue).put("timerKey", timerKey);
    }
}
