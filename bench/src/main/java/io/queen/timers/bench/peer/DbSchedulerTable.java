package io.queen.timers.bench.peer;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/** db-scheduler's table for PostgreSQL, as its postgresql_tables.sql creates it: every benchmark that runs db-scheduler. */
public final class DbSchedulerTable {

    private DbSchedulerTable() {}

    /** Creates {@code scheduled_tasks} and its three indexes in the data source's database, unless they exist. */
    public static void create(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("""
                    CREATE TABLE IF NOT EXISTS scheduled_tasks (
                        task_name TEXT NOT NULL, task_instance TEXT NOT NULL, task_data BYTEA,
                        execution_time TIMESTAMPTZ NOT NULL, picked BOOLEAN NOT NULL, picked_by TEXT,
                        last_success TIMESTAMPTZ, last_failure TIMESTAMPTZ, consecutive_failures INT,
                        last_heartbeat TIMESTAMPTZ, version BIGINT NOT NULL, priority SMALLINT,
                        PRIMARY KEY (task_name, task_instance))""");
            st.execute("CREATE INDEX IF NOT EXISTS execution_time_idx ON scheduled_tasks (execution_time)");
            st.execute("CREATE INDEX IF NOT EXISTS last_heartbeat_idx ON scheduled_tasks (last_heartbeat)");
            st.execute("CREATE INDEX IF NOT EXISTS priority_execution_time_idx ON scheduled_tasks (priority DESC, execution_time ASC)");
        }
    }
}
