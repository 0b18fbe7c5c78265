package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class MigrateCommandIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.empty();

    @Test
    void migrateBringsAnEmptyDatabaseToTheCurrentSchemaAndIsIdempotent() {
        Map<String, String> env = Map.of("QUEEN_JDBC_USER", db.user(), "QUEEN_JDBC_PASSWORD", db.password());
        assertThat(Migrations.pendingCount(db.dataSource())).isPositive();

        Cli first = Cli.run(env, "migrate", "--jdbc-url", db.jdbcUrl());
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out()).startsWith("applied ").contains("schema version");
        assertThat(Migrations.pendingCount(db.dataSource())).isZero();

        Cli again = Cli.run(env, "migrate", "--jdbc-url", db.jdbcUrl(), "--json");
        assertThat(again.exitCode()).isZero();
        assertThat(again.out()).startsWith("{\"applied\":0,\"version\":");
    }

    @Test
    void anUnreachableDatabaseIsOneLine() {
        Cli r = Cli.run("migrate", "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/nothing");
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: cannot connect to jdbc:postgresql://127.0.0.1:1/nothing as postgres: ");
        assertThat(r.err().lines()).hasSize(1);
    }
}
