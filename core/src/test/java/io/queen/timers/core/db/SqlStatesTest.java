package io.queen.timers.core.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SqlStatesTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "40001, TRANSIENT", // serialization failure
        "40P01, TRANSIENT", // deadlock detected
        "08006, TRANSIENT", // connection failure
        "53300, TRANSIENT", // too many connections
        "57P01, TRANSIENT", // admin shutdown (pg_terminate_backend)
        "57014, TRANSIENT", // query canceled
        "58030, TRANSIENT", // io error
        "23505, PERMANENT", // unique violation
        "22P02, PERMANENT", // invalid text representation
        "55P03, TRANSIENT", // lock not available (lock_timeout)
        "25P03, TRANSIENT", // idle in transaction session timeout
        "42883, DEPLOYMENT", // undefined function
        "42P01, DEPLOYMENT", // undefined table
        "42703, DEPLOYMENT", // undefined column
        "42501, DEPLOYMENT", // insufficient privilege (a revoked grant)
        "42601, PERMANENT", // syntax error: not a deployment state we pause for
        "40002, PERMANENT", // integrity constraint violation at commit: not a retry-me
        "P0001, PERMANENT", // raise_exception
    })
    void classifiesBySqlState(String state, ErrorClass expected) {
        assertThat(SqlStates.classify(new SQLException("x", state))).isEqualTo(expected);
    }

    @Test
    void noSqlStateOrNoSqlExceptionIsTransient() {
        assertThat(SqlStates.classify(new SQLException("socket closed"))).isEqualTo(ErrorClass.TRANSIENT);
        assertThat(SqlStates.classify(new IllegalStateException("pool closed"))).isEqualTo(ErrorClass.TRANSIENT);
    }

    @Test
    void findsAnErrorThePgDriverWrappedAsOutOfMemorySqlState() {
        OutOfMemoryError oome = new OutOfMemoryError("Java heap space");
        SQLException wrapped = new SQLException("Ran out of memory retrieving query results.", "53200", oome);
        assertThat(SqlStates.fatalCause(wrapped)).isSameAs(oome);
        assertThat(SqlStates.fatalCause(new SQLException("x", "53200"))).isNull();
    }

    @Test
    void findsTheSqlExceptionInACauseChain() {
        RuntimeException wrapped = new RuntimeException(new RuntimeException(new SQLException("x", "23505")));
        assertThat(SqlStates.classify(wrapped)).isEqualTo(ErrorClass.PERMANENT);
    }

    @ParameterizedTest(name = "{0} caused by the values: {1}")
    @CsvSource({
        "22003, true",  // numeric value out of range
        "22021, true",  // character not in repertoire (a bad encoding)
        "22P05, true",  // untranslatable character (\u0000 into jsonb)
        "23514, true",  // check violation
        "54000, true",  // program limit exceeded (a value too large)
        "08006, false", // connection failure: the world
        "57P01, false", // admin shutdown
        "57014, false", // query canceled (statement timeout)
        "53300, false", // too many connections
        "40001, false", // serialization failure
        "40P01, false", // deadlock
        "55P03, false", // lock not available (lock timeout)
        "42P01, false", // undefined table: a schema problem, not this record's
    })
    void tellsThisRecordFromTheWorld(String state, boolean byValues) {
        assertThat(SqlStates.causedByValues(new RuntimeException(new SQLException("x", state)))).isEqualTo(byValues);
    }

    @Test
    void aNonDatabaseErrorIsThisRecordsAndNoSqlStateIsTheWorlds() {
        assertThat(SqlStates.causedByValues(new ArithmeticException("long overflow"))).isTrue();
        assertThat(SqlStates.causedByValues(new SQLException("socket closed"))).isFalse();
    }

    @ParameterizedTest
    @CsvSource({
        "55P03, true",  // lock not available (lock_timeout)
        "57014, true",  // query canceled (statement_timeout)
        "40P01, false", // deadlock: transient, but nothing was held for long
        "08006, false", // connection failure
        "57P01, false", // admin shutdown: class 57, not a timeout
    })
    void tellsAWaitThatRanOutFromOtherTransientErrors(String state, boolean waitedOut) {
        assertThat(SqlStates.waitedOut(new RuntimeException(new SQLException("x", state)))).isEqualTo(waitedOut);
    }

    @Test
    void noSqlExceptionIsNoWait() {
        assertThat(SqlStates.waitedOut(new IllegalStateException("x"))).isFalse();
    }
}
