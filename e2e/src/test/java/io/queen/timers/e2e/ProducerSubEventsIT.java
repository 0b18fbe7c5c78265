package io.queen.timers.e2e;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.bridge.apply.BatchApplier;
import io.queen.timers.bridge.apply.Incoming;
import io.queen.timers.bridge.apply.OffsetAdvance;
import io.queen.timers.bridge.apply.Source;
import io.queen.timers.bridge.wire.Command;
import io.queen.timers.client.command.Op;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.sweeper.Poison;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.Sweepers;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The producer sub a timer was scheduled with (a token's sub, docs/security.md#producer-identity) follows it
 * into every event of its life: scheduled, fired (V056: fired_subs beside fired), retrying, dead_lettered.
 */
class ProducerSubEventsIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @Test
    void theSubIsInFiredRetryingAndDeadLetteredEventsAndAbsentWhenTheTimerHasNone() throws Exception {
        Staging staging = new Staging(db.dataSource());
        Poison poison = new Poison(staging).install();
        poison.poison("t-bad");
        BatchApplier applier = new BatchApplier(db.dataSource(), "sub-test", Duration.ofSeconds(30), 4096);
        Instant due = Instant.now().minusSeconds(1);
        applier.apply(List.of(incoming(0, "billing-svc", "good", due), incoming(1, "billing-svc", "bad", due), incoming(2, null, "anon", due)),
                List.of(new OffsetAdvance("t", 0, null, 3)));

        try (SweeperMain sweeper = Sweepers.start(db, Map.of())) {
            await().atMost(Duration.ofSeconds(60)).until(() -> staging.count("SELECT count(*) FROM queen.log_dlq") == 1);
        }
        assertThat(subs("scheduled", "q/good")).containsExactly("billing-svc");
        assertThat(subs("fired", "q/good")).containsExactly("billing-svc");
        assertThat(subs("fired", "q/anon")).containsExactly("(none)");
        assertThat(subs("retrying", "q/bad")).hasSize(5).containsOnly("billing-svc");
        assertThat(subs("dead_lettered", "q/bad")).containsExactly("billing-svc");
        assertThat(LogContents.read(db.dataSource())).filteredOn(m -> m.txn().equals("t-good"))
                .singleElement().satisfies(m -> assertThat(m.frame().producerSub()).isEqualTo("billing-svc"));
    }

    private static List<String> subs(String type, String key) {
        List<String> out = new java.util.ArrayList<>();
        try (var c = db.dataSource().getConnection(); var st = c.prepareStatement(
                "SELECT coalesce(event->>'producerSub', '(none)') FROM queen.timer_audit_events WHERE type = ? AND kafka_key = ? ORDER BY id, seq")) {
            st.setString(1, type);
            st.setString(2, key);
            try (var rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    private static Incoming incoming(long offset, String sub, String key, Instant at) {
        return new Incoming(new Source("t", 0, offset), DEFAULT_TENANT, sub, new Command(Op.SCHEDULE, "q", key, Command.DEFAULT_PARTITION,
                Command.Schedule.once(at, "t-" + key, "{}".getBytes(StandardCharsets.UTF_8))));
    }
}
