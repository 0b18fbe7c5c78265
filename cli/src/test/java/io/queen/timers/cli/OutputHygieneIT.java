package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.log.push.Destination;
import io.queen.timers.log.push.LogPusher;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A producer's text never reaches the operator's terminal raw: timer keys, txns, partition names and
 * payloads holding CR, LF, ESC, C1 controls or bidi overrides are escaped in list, peek, tail, find
 * (local: LocalOutputHygieneTest, module local), in the text and the JSON form; and the CLI's errors never print a password.
 */
class OutputHygieneIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String QUEUE = "evil.q";
    static final String KEY = "k\r\nINFO forged line\u001b[2J\u009b31m\u202e";
    static final String TXN = "t\n\u001b]0;pwned\u0007";
    static final String PARTITION = "p\r\u001b[1A";
    static Map<String, String> env;

    @BeforeAll
    static void stage() throws Exception {
        env = Map.of("QUEEN_JDBC_URL", db.jdbcUrl(), "QUEEN_JDBC_USER", db.user(), "QUEEN_JDBC_PASSWORD", db.password());
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(
                "INSERT INTO queen.log_timers (queue, timer_key, \"partition\", deliver_at, txn, message_id, payload, last_error)"
                        + " VALUES (?, ?, ?, now() + interval '1 hour', ?, ?, convert_to(?, 'UTF8'), ?)")) {
            st.setString(1, QUEUE);
            st.setString(2, KEY);
            st.setString(3, PARTITION);
            st.setString(4, TXN);
            st.setObject(5, UuidV7.next());
            st.setString(6, "{\n\"a\":\"\u001b[31m\"}");
            st.setString(7, "boom\r\nforged");
            st.executeUpdate();
        }
        new LogPusher(db.dataSource()).push(new Destination(Destination.DEFAULT_TENANT, QUEUE, PARTITION),
                SegmentCodec.pack(List.of(Frame.of(UuidV7.next(), TXN, "{ \"x\" :\n\"\u001b[31m\u0085\" }".getBytes(StandardCharsets.UTF_8)))));
    }

    @Test
    void listPeekTailAndFindEscapeWhatProducersWrote() {
        for (String[] args : List.of(
                new String[] {"list", "-q", QUEUE}, new String[] {"list", "-q", QUEUE, "--json"},
                new String[] {"peek", "-q", QUEUE, "-k", KEY}, new String[] {"peek", "-q", QUEUE, "-k", KEY, "--json"},
                new String[] {"peek", "-q", QUEUE, "-k", KEY + "-missing"},
                new String[] {"tail", "-q", QUEUE, "--partition", PARTITION}, new String[] {"tail", "-q", QUEUE, "--partition", PARTITION, "--json"},
                new String[] {"find", "-q", QUEUE, "--txn", TXN}, new String[] {"find", "-q", QUEUE, "--txn", TXN + "x"})) {
            Cli r = Cli.run(env, args);
            assertThat(r.exitCode()).as("%s: %s", args[0], r.err()).isIn(0, QueenTimers.EXIT_NOT_FOUND);
            assertClean(r.out(), String.join(" ", args));
            assertClean(r.err(), String.join(" ", args));
        }
        assertThat(Cli.run(env, "list", "-q", QUEUE).out()).contains("k\\r\\nINFO forged line\\u001b[2J\\u009b31m\\u202e");
    }

    @Test
    void errorsNeverPrintAPassword() {
        Cli r = Cli.run(Map.of(), "list", "-q", QUEUE, "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/x?user=u&password=hunter2&sslmode=disable");
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).doesNotContain("hunter2").contains("password=***");
        Cli traced = Cli.run(Map.of(), "--stacktrace", "list", "-q", QUEUE, "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/x?password=hunter2");
        assertThat(traced.err()).doesNotContain("hunter2");
    }

    /** Every line ends where the program ended it: no CR, no ESC, no C1 control, no bidi override; only LF between lines. */
    static void assertClean(String printed, String what) {
        for (char ch : printed.toCharArray()) {
            boolean bad = (ch < 0x20 && ch != '\n') || (ch >= 0x7f && ch <= 0x9f) || (ch >= 0x202a && ch <= 0x202e) || ch == 0x2028;
            assertThat(bad).as("%s printed U+%04X raw: %s", what, (int) ch, printed).isFalse();
        }
        assertThat(printed).as(what).doesNotContain("\nINFO forged");
    }
}
