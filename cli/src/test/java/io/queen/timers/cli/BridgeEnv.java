package io.queen.timers.cli;

import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.util.HashMap;
import java.util.Map;

/** The environment a test's in-process bridge (ServiceCommandsIT.Background) and the CLI beside it read. */
final class BridgeEnv {

    private BridgeEnv() {}

    static Map<String, String> of(PostgresDatabase db, String commands, String audit, int port) {
        Map<String, String> env = new HashMap<>();
        env.put("QUEEN_JDBC_URL", db.jdbcUrl());
        env.put("QUEEN_JDBC_USER", db.user());
        env.put("QUEEN_DB_ROLE_CHECK", "false"); // the service connects as the superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        env.put("QUEEN_JDBC_PASSWORD", db.password());
        env.put("QUEEN_KAFKA_BOOTSTRAP", TestKafka.bootstrapServers());
        env.put("QUEEN_COMMAND_TOPICS", commands);
        env.put("QUEEN_BRIDGE_START_POSITION", "earliest"); // the test's own topic: commands sent before the first join are applied
        env.put("QUEEN_AUDIT_TOPIC", audit);
        env.put("QUEEN_HTTP_PORT", Integer.toString(port));
        return env;
    }
}
