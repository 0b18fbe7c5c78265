package io.queen.timers.client.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The series fields of a recurring timer's events (docs/commands.md#recurring-timers): fired, dead_lettered and skipped. */
class AuditEventsOccurrenceTest {

    static final String HEAD = "{\"eventId\":\"7d1b3c1e-2f0a-4c55-9a3e-1c1f2b3a4d5e\",\"at\":\"2026-03-08T07:30:01Z\","
            + "\"tenant\":\"00000000-0000-0000-0000-000000000001\",\"queue\":\"reports\",\"timerKey\":\"nightly\",\"partition\":\"Default\","
            + "\"txn\":\"nightly@2026-03-08T07:30:00Z\",\"messageId\":\"019ade00-0000-7000-8000-000000000001\","
            + "\"deliverAt\":\"2026-03-08T07:30:00Z\"";

    static String fired(String series) {
        return HEAD + ",\"type\":\"fired\",\"offset\":17,\"lateMs\":8,\"attempts\":0" + series + "}";
    }

    @Test
    void aFiredOccurrenceCarriesItsPlaceInTheSeries() {
        AuditEvent e = AuditEvents.parse(fired(",\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":3,\"next\":\"2026-03-09T07:30:00+01:00\","
                + "\"skipped\":{\"from\":\"2026-03-06T07:30:00Z\",\"to\":\"2026-03-07T07:30:00Z\"}"));
        assertThat(e).isInstanceOfSatisfying(AuditEvent.Fired.class, f -> {
            AuditEvent.Occurrence o = f.recurrence().orElseThrow();
            assertThat(o.occurrence()).isEqualTo(Instant.parse("2026-03-08T07:30:00Z"));
            assertThat(o.seq()).isEqualTo(3);
            assertThat(o.nextOccurrence()).contains(Instant.parse("2026-03-09T06:30:00Z"));
            assertThat(o.skippedRange()).contains(new AuditEvent.Range(Instant.parse("2026-03-06T07:30:00Z"), Instant.parse("2026-03-07T07:30:00Z")));
        });
    }

    @Test
    void theLastOccurrenceHasNoNextAndAOneShotFireNoOccurrence() {
        AuditEvent last = AuditEvents.parse(fired(",\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":5,\"next\":null"));
        assertThat(last).isInstanceOfSatisfying(AuditEvent.Fired.class, f -> {
            assertThat(f.recurrence()).isPresent();
            assertThat(f.occurrence().nextOccurrence()).isEmpty();
            assertThat(f.occurrence().skippedRange()).isEmpty();
        });
        assertThat(AuditEvents.parse(fired(""))).isInstanceOfSatisfying(AuditEvent.Fired.class, f -> assertThat(f.recurrence()).isEmpty());
    }

    @Test
    void aDeadLetteredOccurrenceNamesWhereTheSeriesGoesOn() {
        AuditEvent e = AuditEvents.parse(HEAD + ",\"type\":\"dead_lettered\",\"attempts\":5,\"error\":\"boom\","
                + "\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":2,\"next\":\"2026-03-09T06:30:00Z\"}");
        assertThat(e).isInstanceOfSatisfying(AuditEvent.DeadLettered.class,
                d -> assertThat(d.recurrence().flatMap(AuditEvent.Occurrence::nextOccurrence)).contains(Instant.parse("2026-03-09T06:30:00Z")));
    }

    /** Issue 47: a series that ends says why, and a dead letter of a series counts its run. */
    @Test
    void anOccurrenceSaysWhyItsSeriesEndedAndADeadLetterItsRunInARow() {
        AuditEvent last = AuditEvents.parse(fired(",\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":5,\"next\":null,\"ended\":\"max_occurrences\""));
        assertThat(last).isInstanceOfSatisfying(AuditEvent.Fired.class, f -> {
            assertThat(f.occurrence().endReason()).contains(SeriesEnd.MAX_OCCURRENCES);
            assertThat(f.occurrence().deadLetterRun()).isEmpty();
        });
        AuditEvent dead = AuditEvents.parse(HEAD + ",\"type\":\"dead_lettered\",\"attempts\":5,\"error\":\"boom\","
                + "\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":4,\"next\":null,\"ended\":\"dead_letters\",\"deadLettersInRow\":3}");
        assertThat(dead).isInstanceOfSatisfying(AuditEvent.DeadLettered.class, d -> {
            assertThat(d.occurrence().endReason()).contains(SeriesEnd.DEAD_LETTERS);
            assertThat(d.occurrence().deadLetterRun()).hasValue(3);
        });
        AuditEvent goesOn = AuditEvents.parse(HEAD + ",\"type\":\"dead_lettered\",\"attempts\":5,\"error\":\"boom\","
                + "\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":2,\"next\":\"2026-03-09T07:30:00Z\",\"deadLettersInRow\":1}");
        assertThat(goesOn).isInstanceOfSatisfying(AuditEvent.DeadLettered.class, d -> {
            assertThat(d.occurrence().endReason()).isEmpty();
            assertThat(d.occurrence().deadLetterRun()).hasValue(1);
        });
        for (SeriesEnd e : SeriesEnd.values()) {
            if (e != SeriesEnd.OTHER) {
                assertThat(SeriesEnd.fromWire(e.wireName())).isEqualTo(e);
            }
        }
        // a reason a later version adds: the event is still read, the end still known
        AuditEvent later = AuditEvents.parse(fired(",\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":5,\"next\":null,\"ended\":\"paused_for_ever\""));
        assertThat(((AuditEvent.Fired) later).occurrence().endReason()).contains(SeriesEnd.OTHER);
        assertThatThrownBy(() -> AuditEvents.parse(fired(",\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":5,\"next\":null,\"ended\":3")))
                .isInstanceOf(AuditEvents.MalformedEvent.class).hasMessageContaining("'ended'");
    }

    @Test
    void aSkippedEventParsesAndNeedsItsOccurrence() {
        String skipped = HEAD + ",\"type\":\"skipped\",\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":4,\"next\":\"2026-03-12T06:30:00Z\","
                + "\"skipped\":{\"from\":\"2026-03-08T07:30:00Z\",\"to\":\"2026-03-11T06:30:00Z\"}}";
        assertThat(AuditEvents.parse(skipped)).isInstanceOfSatisfying(AuditEvent.Skipped.class, s -> {
            assertThat(s.type()).isEqualTo(EventType.SKIPPED);
            assertThat(s.txn()).isEqualTo("nightly@2026-03-08T07:30:00Z");
            assertThat(s.occurrence().seq()).isEqualTo(4);
            assertThat(s.occurrence().skippedRange().orElseThrow().to()).isEqualTo(Instant.parse("2026-03-11T06:30:00Z"));
        });
        assertThatThrownBy(() -> AuditEvents.parse(HEAD + ",\"type\":\"skipped\"}")).isInstanceOf(AuditEvents.MalformedEvent.class)
                .isNotInstanceOf(AuditEvents.UnknownEvent.class).hasMessageContaining("'occurrence'");
        assertThatThrownBy(() -> AuditEvents.parse(fired(",\"occurrence\":\"2026-03-08T07:30:00Z\",\"next\":null")))
                .isInstanceOf(AuditEvents.MalformedEvent.class).hasMessageContaining("'seq'");
    }
}
