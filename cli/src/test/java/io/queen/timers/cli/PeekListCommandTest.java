package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** peek shows one staged timer, list pages through a queue's timers by key. */
class PeekListCommandTest {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String QUEUE = "orders.reminders";
    static Map<String, String> env;

    @BeforeAll
    static void stageTimers() throws Exception {
        env = Map.of("QUEEN_JDBC_URL", db.jdbcUrl(), "QUEEN_JDBC_USER", db.user(), "QUEEN_JDBC_PASSWORD", db.password());
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(
                "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)"
                        + " VALUES (?, ?, now() + interval '1 hour', ?, ?, convert_to(?, 'UTF8'))")) {
            for (int i = 1; i <= 5; i++) {
                st.setString(1, QUEUE);
                st.setString(2, "order-" + i);
                st.setString(3, "remind-" + i);
                st.setObject(4, UuidV7.next());
                st.setString(5, "{\"orderId\":" + i + "}");
                st.addBatch();
            }
            st.executeBatch();
        }
    }

    @Test
    void peekShowsAPendingTimerWithItsPayload() throws Exception {
        Cli r = Cli.run(env, "peek", "-q", QUEUE, "-k", "order-3");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("orders.reminders/order-3  waiting  deliver at ")
                .contains("(in 59m", "txn remind-3", "attempts 0", "payload {\"orderId\":3}");

        var json = Output.mapper().readTree(Cli.run(env, "peek", "-q", QUEUE, "-k", "order-3", "--json").out());
        assertThat(json.get("state").asText()).isEqualTo("waiting");
        assertThat(json.get("payload").asText()).isEqualTo("{\"orderId\":3}");
    }

    @Test
    void peekOfATimerThatIsNotPendingExitsWith3() {
        Cli r = Cli.run(env, "peek", "-q", QUEUE, "-k", "order-99");
        assertThat(r.exitCode()).isEqualTo(QueenTimers.EXIT_NOT_FOUND);
        assertThat(r.out()).startsWith("not pending: orders.reminders/order-99");
    }

    @Test
    void listPagesByKey() {
        Cli first = Cli.run(env, "list", "-q", QUEUE, "--limit", "2");
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out().lines().toList()).hasSize(3)
                .satisfies(l -> assertThat(l.get(0)).startsWith("order-1 "))
                .satisfies(l -> assertThat(l.get(1)).startsWith("order-2 "))
                .satisfies(l -> assertThat(l.get(2)).isEqualTo("-- more: --after order-2"));

        Cli rest = Cli.run(env, "list", "-q", QUEUE, "--after", "order-2", "--json");
        assertThat(rest.out().lines()).hasSize(3).first().asString().contains("\"timerKey\":\"order-3\"", "\"state\":\"waiting\"");

        Cli bad = Cli.run(env, "list", "-q", QUEUE, "--limit", "0");
        assertThat(bad.exitCode()).isEqualTo(1);
        assertThat(bad.err()).isEqualTo("error: --limit 0 is out of range: allowed 1..1000" + System.lineSeparator());
    }
}
