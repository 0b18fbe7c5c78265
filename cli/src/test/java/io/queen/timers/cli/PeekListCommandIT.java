package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** peek shows one staged timer, list pages through a queue's timers by key; both show a recurring timer's rule. */
class PeekListCommandIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String QUEUE = "orders.reminders";
    static final String REPORTS = "reports";
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
        // a recurring timer's pending occurrence #4 and a one-shot timer, in a queue of their own; the row as the fire stages it
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(
                "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload, recurrence)"
                        + " VALUES (?, ?, date_trunc('second', now()) + interval '2 hours', ?, ?, convert_to('{}', 'UTF8'), ?::jsonb)")) {
            st.setString(1, REPORTS);
            st.setString(2, "hourly");
            st.setString(3, "placeholder");
            st.setObject(4, UuidV7.next());
            st.setString(5, "{\"every\": \"PT1H\", \"startAt\": \"2026-01-01T00:00:00Z\", \"maxOccurrences\": 100,"
                    + " \"catchUp\": \"all\", \"txn\": \"tick\", \"seq\": 4}");
            st.executeUpdate();
            st.setString(2, "once");
            st.setString(3, "once-txn");
            st.setObject(4, UuidV7.next());
            st.setString(5, null);
            st.executeUpdate();
        }
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(
                "UPDATE queen.log_timers SET txn = 'tick@' || to_char(deliver_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
                        + " WHERE queue = ? AND timer_key = 'hourly'")) {
            st.setString(1, REPORTS);
            st.executeUpdate();
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

    @Test
    void peekAndListShowARecurringTimersRuleSeriesTxnAndNextOccurrence() throws Exception {
        var json = Output.mapper().readTree(Cli.run(env, "peek", "-q", REPORTS, "-k", "hourly", "--json").out());
        String next = json.get("deliverAt").asText();
        var recurring = json.get("recurring");
        assertThat(recurring.get("rule").asText()).isEqualTo("every PT1H, from 2026-01-01T00:00:00Z, at most 100, catchUp all");
        assertThat(recurring.get("seriesTxn").asText()).isEqualTo("tick");
        assertThat(recurring.get("seq").asInt()).isEqualTo(4);
        assertThat(recurring.get("nextOccurrence").asText()).isEqualTo(next);
        assertThat(json.get("txn").asText()).isEqualTo("tick@" + next);

        Cli peek = Cli.run(env, "peek", "-q", REPORTS, "-k", "hourly");
        assertThat(peek.exitCode()).as(peek.err()).isZero();
        assertThat(peek.out()).contains("deliver at " + next, "txn tick@" + next,
                "\n  recurring every PT1H, from 2026-01-01T00:00:00Z, at most 100, catchUp all  series txn tick  next occurrence #4 at " + next);
        Cli once = Cli.run(env, "peek", "-q", REPORTS, "-k", "once");
        assertThat(once.out()).contains("txn once-txn").doesNotContain("recurring");
        assertThat(Output.mapper().readTree(Cli.run(env, "peek", "-q", REPORTS, "-k", "once", "--json").out()).get("recurring").isNull())
                .isTrue();

        Cli list = Cli.run(env, "list", "-q", REPORTS);
        assertThat(list.exitCode()).as(list.err()).isZero();
        assertThat(list.out().lines().toList()).hasSize(2)
                .satisfies(l -> assertThat(l.get(0)).startsWith("hourly ").endsWith("  recurring every PT1H, from 2026-01-01T00:00:00Z,"
                        + " at most 100, catchUp all  series txn tick  next occurrence #4 at " + next))
                .satisfies(l -> assertThat(l.get(1)).startsWith("once ").doesNotContain("recurring"));
        List<JsonNode> rows = new ArrayList<>();
        for (String line : Cli.run(env, "list", "-q", REPORTS, "--json").out().lines().toList()) {
            rows.add(Output.mapper().readTree(line));
        }
        assertThat(rows.get(0).get("recurring")).isEqualTo(recurring);
        assertThat(rows.get(1).get("recurring").isNull()).isTrue();
    }
}
