package io.queen.timers.sweeper;

import io.queen.timers.log.codec.TxnHash;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;

/**
 * A destination that refuses particular messages, installed in ONE test database only: the test kit's trigger (the
 * fault harness's too, {@link io.queen.timers.testkit.Poison}) raises check_violation (SQLSTATE 23514, a permanent error) when a
 * pushed segment carries the txn hash of a poisoned timer. It is what a real permanent refusal looks like to the
 * sweeper: the push statement fails inside the fire transaction, for that data, every time. Segments without a
 * poisoned txn go through untouched.
 */
public final class Poison {

    private final DataSource dataSource;

    public Poison(Staging staging) {
        this.dataSource = staging.dataSource();
    }

    public Poison install() {
        run(io.queen.timers.testkit.Poison::install);
        return this;
    }

    public void poison(String txn) {
        run(c -> io.queen.timers.testkit.Poison.register(c, List.of(TxnHash.of(txn))));
    }

    public void cure(String txn) {
        run(c -> io.queen.timers.testkit.Poison.cure(c, List.of(TxnHash.of(txn))));
    }

    public void cureAll() {
        run(io.queen.timers.testkit.Poison::cureAll);
    }

    private interface Step {
        void on(Connection c) throws SQLException;
    }

    private void run(Step step) {
        try (Connection c = dataSource.getConnection()) {
            step.on(c);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
