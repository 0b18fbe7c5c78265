package io.queen.timers.client.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.client.command.RejectReason;
import org.junit.jupiter.api.Test;

/**
 * The audit schema evolves additively within its {@code $id} version (docs/formats.md#audit-events-on-the-topic): a field this client
 * does not know is ignored, and an event type or reject reason a later version added is an {@link
 * AuditEvents.UnknownEvent} a consumer can tell apart from a broken event, to skip it and log it.
 */
class AuditEventsEvolutionTest {

    static String rejected(String reason, String extra) {
        return "{\"eventId\":\"7d1b3c1e-2f0a-4c55-9a3e-1c1f2b3a4d5e\",\"type\":\"rejected\",\"at\":\"2026-12-04T10:00:00Z\","
                + "\"tenant\":\"00000000-0000-0000-0000-000000000001\",\"source\":{\"topic\":\"cmds\",\"partition\":0,\"offset\":7},"
                + "\"reason\":\"" + reason + "\",\"error\":\"too far ahead\"" + extra + "}";
    }

    @Test
    void aFieldThisVersionDoesNotKnowIsIgnored() {
        AuditEvent e = AuditEvents.parse(rejected("horizon", ",\"addedLater\":{\"x\":1}"));
        assertThat(e).isInstanceOfSatisfying(AuditEvent.Rejected.class, r -> assertThat(r.reason()).isEqualTo(RejectReason.HORIZON));
    }

    @Test
    void aTypeOrAReasonALaterVersionAddedIsAnUnknownEventNotABrokenOne() {
        assertThatThrownBy(() -> AuditEvents.parse(rejected("horizon", "").replace("\"rejected\"", "\"archived\"")))
                .isInstanceOf(AuditEvents.UnknownEvent.class).hasMessageContaining("'archived'");
        assertThatThrownBy(() -> AuditEvents.parse(rejected("too_many_moons", "")))
                .isInstanceOf(AuditEvents.UnknownEvent.class).hasMessageContaining("'too_many_moons'");
        // a broken event of a known type stays a MalformedEvent, not an unknown one
        assertThatThrownBy(() -> AuditEvents.parse(rejected("horizon", "").replace("\"source\"", "\"src\"")))
                .isInstanceOf(AuditEvents.MalformedEvent.class).isNotInstanceOf(AuditEvents.UnknownEvent.class);
    }

    @Test
    void aRejectedEventWithoutAnErrorTextParsesAsTheSchemaAllows() {
        // the schema types rejected.error as string or null: a consumer that follows the schema gets no exception
        AuditEvent e = AuditEvents.parse(rejected("horizon", "").replace("\"error\":\"too far ahead\"", "\"error\":null"));
        assertThat(e).isInstanceOfSatisfying(AuditEvent.Rejected.class, r -> assertThat(r.error()).isNull());
    }
}
