package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.log.push.Destination;
import io.queen.timers.log.push.LogPusher;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** find answers "was it sent?" from the log, per occurrence for a recurring timer; tail decodes the log and follows it. */
class FindTailCommandIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String QUEUE = "orders.reminders";
    static final UUID SENT_ID = UuidV7.next();
    static Map<String, String> env;

    @BeforeAll
    static void pushTwoMessages() throws Exception {
        env = Map.of("QUEEN_JDBC_URL", db.jdbcUrl(), "QUEEN_JDBC_USER", db.user(), "QUEEN_JDBC_PASSWORD", db.password());
        push("remind-41", UuidV7.next(), "{\"orderId\":41}");
        push("remind-42", SENT_ID, "{\"orderId\":42}");
    }

    static void push(String txn, UUID id, String payload) throws Exception {
        new LogPusher(db.dataSource()).push(new Destination(Destination.DEFAULT_TENANT, QUEUE, "Default"),
                SegmentCodec.pack(List.of(Frame.of(id, txn, payload.getBytes(StandardCharsets.UTF_8)))));
    }

    @Test
    void findSaysWhereASentTxnIs() throws Exception {
        Cli r = Cli.run(env, "find", "-q", QUEUE, "--txn", "remind-42");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("sent: orders.reminders partition Default offset 1").contains(SENT_ID.toString());

        Cli json = Cli.run(env, "find", "-q", QUEUE, "--txn", "remind-42", "--json");
        var node = Output.mapper().readTree(json.out());
        assertThat(node.get("found").asBoolean()).isTrue();
        assertThat(node.get("hits").get(0).get("offset").asLong()).isEqualTo(1);
    }

    @Test
    void findOfATxnNeverSentExitsWith3() {
        Cli r = Cli.run(env, "find", "-q", QUEUE, "--txn", "never-scheduled");
        assertThat(r.exitCode()).isEqualTo(QueenTimers.EXIT_NOT_FOUND);
        assertThat(r.out()).startsWith("not sent: no message with txn never-scheduled in orders.reminders");
    }

    @Test
    void findOfASeriesTxnShowsThePendingSeriesAndEachOccurrenceIsFoundByItsOwnTxn() throws Exception {
        String queue = "reports.nightly";
        Instant sent = Instant.parse("2090-03-07T01:30:00Z");
        Instant next = Instant.parse("2090-03-08T01:30:00Z");
        // occurrence #1 fired (in the log as nightly@<instant>); #2 is the series' pending row
        new LogPusher(db.dataSource()).push(new Destination(Destination.DEFAULT_TENANT, queue, "Default"),
                SegmentCodec.pack(List.of(Frame.of(UuidV7.next(), "nightly@" + sent, "{}".getBytes(StandardCharsets.UTF_8)))));
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(
                "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload, recurrence)"
                        + " VALUES (?, 'report', ?, ?, ?, convert_to('{}', 'UTF8'), ?::jsonb)")) {
            st.setString(1, queue);
            st.setObject(2, java.time.OffsetDateTime.ofInstant(next, java.time.ZoneOffset.UTC));
            st.setString(3, "nightly@" + next);
            st.setObject(4, UuidV7.next());
            st.setString(5, "{\"cron\": \"30 1 * * *\", \"zone\": \"UTC\", \"startAt\": \"2090-03-01T00:00:00Z\","
                    + " \"catchUp\": \"one\", \"txn\": \"nightly\", \"seq\": 2}");
            st.executeUpdate();
        }

        Cli series = Cli.run(env, "find", "-q", queue, "--txn", "nightly");
        assertThat(series.exitCode()).as(series.err()).isZero();
        assertThat(series.out().lines().toList()).containsExactly(
                "not sent as such: nightly names a recurring series; each occurrence is sent with its own txn, nightly@<instant>",
                "series: reports.nightly/report  waiting  recurring cron '30 1 * * *' UTC, from 2090-03-01T00:00:00Z, catchUp one"
                        + "  series txn nightly  next occurrence #2 at " + next + "  txn nightly@" + next);
        var json = Output.mapper().readTree(Cli.run(env, "find", "-q", queue, "--txn", "nightly", "--json").out());
        assertThat(json.get("found").asBoolean()).isFalse();
        assertThat(json.get("series")).hasSize(1);
        assertThat(json.get("series").get(0).get("timerKey").asText()).isEqualTo("report");
        assertThat(json.get("series").get(0).get("txn").asText()).isEqualTo("nightly@" + next);
        assertThat(json.get("series").get(0).get("seq").asInt()).isEqualTo(2);
        assertThat(json.get("series").get(0).get("nextOccurrence").asText()).isEqualTo(next.toString());
        assertThat(json.get("series").get(0).get("rule").asText()).startsWith("cron '30 1 * * *' UTC");

        // was it sent? per occurrence: the fired one is in the log, the pending one is not
        Cli fired = Cli.run(env, "find", "-q", queue, "--txn", "nightly@" + sent);
        assertThat(fired.exitCode()).as(fired.err()).isZero();
        assertThat(fired.out()).startsWith("sent: reports.nightly partition Default offset 0").doesNotContain("series:");
        Cli pending = Cli.run(env, "find", "-q", queue, "--txn", "nightly@" + next);
        assertThat(pending.exitCode()).isEqualTo(QueenTimers.EXIT_NOT_FOUND);
        assertThat(pending.out()).startsWith("not sent: no message with txn nightly@" + next);

        // a series that ended (or was cancelled) has no pending row: its txn is found nowhere
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(
                "DELETE FROM queen.log_timers WHERE queue = ?")) {
            st.setString(1, queue);
            st.executeUpdate();
        }
        Cli ended = Cli.run(env, "find", "-q", queue, "--txn", "nightly", "--json");
        assertThat(ended.exitCode()).isEqualTo(QueenTimers.EXIT_NOT_FOUND);
        assertThat(Output.mapper().readTree(ended.out()).get("series")).isEmpty();
    }

    @Test
    void tailDecodesFromAnOffsetAndFromTheEnd() throws Exception {
        Cli all = Cli.run(env, "tail", "-q", QUEUE, "--from", "0");
        assertThat(all.exitCode()).as(all.err()).isZero();
        assertThat(all.out().lines()).hasSize(2);
        assertThat(all.out().lines().toList().get(0)).startsWith("Default@0").contains("txn remind-41", "{\"orderId\":41}");

        Cli lastOne = Cli.run(env, "tail", "-q", QUEUE, "--last", "1", "--json");
        assertThat(lastOne.out().lines()).hasSize(1);
        var node = Output.mapper().readTree(lastOne.out());
        assertThat(node.get("offset").asLong()).isEqualTo(1);
        assertThat(node.get("txn").asText()).isEqualTo("remind-42");

        Cli missing = Cli.run(env, "tail", "-q", "no.such.queue", "--last", "5");
        assertThat(missing.exitCode()).isEqualTo(QueenTimers.EXIT_NOT_FOUND);
        assertThat(missing.err()).contains("has no partition Default");
    }

    @Test
    void tailFollowPrintsMessagesAsTheyArrive() throws Exception {
        String queue = "follow.me";
        StringWriter out = new StringWriter();
        AtomicInteger code = new AtomicInteger(-1);
        Thread t = new Thread(() -> code.set(QueenTimers.commandLine(new QueenTimers(env), new PrintWriter(out, true),
                new PrintWriter(new StringWriter(), true)).execute("tail", "-q", queue, "--follow", "--interval", "100ms")));
        t.start();
        try {
            Thread.sleep(500);
            new LogPusher(db.dataSource()).push(new Destination(Destination.DEFAULT_TENANT, queue, "Default"),
                    SegmentCodec.pack(List.of(Frame.of(UuidV7.next(), "late-txn", "{}".getBytes(StandardCharsets.UTF_8)))));
            await().atMost(Duration.ofSeconds(10)).until(() -> out.toString().contains("txn late-txn"));
        } finally {
            t.interrupt();
            t.join(5_000);
        }
        assertThat(code.get()).isEqualTo(130);
    }
}
