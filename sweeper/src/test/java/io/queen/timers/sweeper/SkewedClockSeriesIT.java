package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.ShippedJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A sweeper whose host's wall clock is 30 s off the database's plans a series' catch-up by the database's clock
 * (docs/recurring.md "The fire of an occurrence"). The sweeper runs as it ships (a JVM of its own, the image's flags, the
 * manifest's heap) with Debian's libfaketime preloaded, which answers every wall-clock read of the process
 * ({@code Instant.now}, {@code System.currentTimeMillis}) with the real time plus the offset and leaves the monotonic clock
 * alone: what the fault harness's clock step does to a running sweeper. Two every-second series, each with its occurrence
 * 20 s overdue: under catchUp {@code one} the occurrence fires late and the missed ones are skipped, under {@code none} it
 * is itself skipped; in both the skipped occurrences were all due, and the series resumes at the first occurrence after
 * the outcome, by the database's clock (the event's {@code at}: its transaction's {@code now()}). A sweeper that planned
 * by its own clock skips nothing when it is behind (the next it stages is 19 s overdue) and skips 30 s of occurrences not
 * yet due when it is ahead. The library is a test requirement here as in CI (.ci/run installs it before the build).
 */
class SkewedClockSeriesIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    /** Debian's libfaketime, as the harness's clock step preloads it. */
    private static final Path LIBFAKETIME = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");

    /** How long before the outcome's transaction the plan may be made: a claim's rows on the wire, then a pack. */
    private static final Duration PLANNED_BEFORE = Duration.ofSeconds(2);

    @ParameterizedTest(name = "the sweeper's wall clock {0} s off the database's")
    @ValueSource(ints = {-30, 30})
    void aSweeperWhoseWallClockIsOffPlansCatchUpByTheDatabasesClock(int offsetSeconds) throws Exception {
        assertThat(LIBFAKETIME).as("libfaketime (apt-get install -y --no-install-recommends libfaketime)").isRegularFile();
        Staging staging = new Staging(db.dataSource());
        staging.clear();
        Map<String, String> clock = Map.of("LD_PRELOAD", LIBFAKETIME.toString(), "FAKETIME", (offsetSeconds > 0 ? "+" : "") + offsetSeconds + "s",
                "FAKETIME_DONT_FAKE_MONOTONIC", "1", "FAKETIME_FORCE_MONOTONIC_FIX", "0",
                "JAVA_TOOL_OPTIONS", ShippedJvm.manifestJavaToolOptions("sweeper"));
        assertThat(wallClockOffsetMs(clock)).as("a process with this environment reads the wall clock moved")
                .isBetween(offsetSeconds * 1000L - 1500, offsetSeconds * 1000L + 1500);

        Instant o1 = dbNow().minusSeconds(20).truncatedTo(ChronoUnit.SECONDS);
        overdueSeries("caught-up", "one", o1);
        overdueSeries("missed", "none", o1);

        Process sweeper = ChildSweeper.start(db, ShippedJvm.imageFlags(), clock, Map.of(),
                Path.of("target", "skewed-clock-sweeper" + offsetSeconds + ".log"));
        Outcome one;
        Outcome none;
        try {
            one = await().atMost(60, TimeUnit.SECONDS).pollInterval(100, TimeUnit.MILLISECONDS).until(() -> outcome("caught-up"), o -> o != null);
            none = await().atMost(60, TimeUnit.SECONDS).pollInterval(100, TimeUnit.MILLISECONDS).until(() -> outcome("missed"), o -> o != null);
        } finally {
            sweeper.destroy();
            if (!sweeper.waitFor(60, TimeUnit.SECONDS)) {
                sweeper.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }

        assertThat(one.type()).as("catchUp one: the late occurrence fires").isEqualTo("fired");
        assertThat(none.type()).as("catchUp none: the overtaken occurrence is skipped, not delivered").isEqualTo("skipped");
        assertThat(one.skippedFrom()).as("catchUp one skips the occurrences after it that were due").isEqualTo(o1.plusSeconds(1));
        assertThat(none.skippedFrom()).as("catchUp none names the skipped occurrence itself").isEqualTo(o1);
        for (Outcome o : new Outcome[] {one, none}) {
            assertThat(o.skippedTo()).as("%s: skipped only occurrences due by the database's clock at %s", o.type(), o.at())
                    .isNotNull().isBeforeOrEqualTo(o.at());
            assertThat(o.next()).as("%s: the next is the first occurrence after the skipped ones", o.type())
                    .isEqualTo(o.skippedTo().plusSeconds(1));
            assertThat(o.next()).as("%s: the series resumes at the first occurrence after %s by the database's clock", o.type(), o.at())
                    .isAfter(o.at().minus(PLANNED_BEFORE)).isBeforeOrEqualTo(o.at().plusSeconds(1));
        }
    }

    /** A series of key {@code key} (every second from {@code o1}, catchUp {@code catchUp}) whose first occurrence is pending. */
    private void overdueSeries(String key, String catchUp, Instant o1) {
        Staging staging = new Staging(db.dataSource());
        staging.schedule(DEFAULT_TENANT, "series.q", key, -20);
        staging.execute("UPDATE queen.log_timers SET deliver_at = '" + o1 + "', txn = '" + key + "@" + o1 + "', recurrence = '{\"every\":"
                + "\"PT1S\",\"startAt\":\"" + o1 + "\",\"catchUp\":\"" + catchUp + "\",\"txn\":\"" + key + "\",\"seq\":1}'::jsonb"
                + " WHERE timer_key = '" + key + "'");
    }

    /** The first occurrence's outcome event (fired or skipped), as the outbox holds it: its type, its transaction's time, its plan. */
    private record Outcome(String type, Instant at, Instant skippedFrom, Instant skippedTo, Instant next) {}

    private static Outcome outcome(String key) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement("""
                SELECT type, created_at, event #>> '{skipped,from}', event #>> '{skipped,to}', event ->> 'next'
                  FROM queen.timer_audit_events
                 WHERE event ->> 'timerKey' = ? AND type IN ('fired', 'skipped') AND (event ->> 'seq')::int = 1""")) {
            st.setString(1, key);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new Outcome(rs.getString(1), rs.getTimestamp(2).toInstant(), instant(rs.getString(3)), instant(rs.getString(4)),
                        instant(rs.getString(5)));
            }
        }
    }

    private static Instant instant(String iso) {
        return iso == null ? null : java.time.OffsetDateTime.parse(iso).toInstant();
    }

    private static Instant dbNow() throws SQLException {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement("SELECT now()");
                ResultSet rs = st.executeQuery()) {
            rs.next();
            return rs.getTimestamp(1).toInstant();
        }
    }

    /** The wall clock a process with {@code environment} reads, minus this one's, in ms (a {@code date} of its own). */
    private static long wallClockOffsetMs(Map<String, String> environment) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("date", "+%s%3N").redirectErrorStream(true);
        pb.environment().putAll(environment);
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        long before = System.currentTimeMillis();
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        long after = System.currentTimeMillis();
        return Long.parseLong(out) - (before + after) / 2;
    }
}
