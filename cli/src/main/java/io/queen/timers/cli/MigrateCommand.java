package io.queen.timers.cli;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.bridge.BridgeGroupSettings;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.sql.BridgeGroups;
import io.queen.timers.sql.Migrations;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.flywaydb.core.api.output.MigrateResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Applies the schema (the one-shot step of docker-compose), and binds the bridge group its settings declare to the login
 * that runs it, with its command topics' tenants: the schema owner's step, never a bridge's first call.
 */
@Command(name = "migrate", mixinStandardHelpOptions = true,
        description = {"Apply the schema migrations and print the version.",
            "With bridge.login (QUEEN_BRIDGE_LOGIN or --bridge-login): bind the bridge group (bridge.group.id) to that login"
                    + " and its command topics (command.topics) to their tenants (command.topic.tenants, topic.<name>.tenant),"
                    + " as the bridge reads them (docs/schema-and-roles.md#database-roles).",
            "Safe beside running services and when several run at once (advisory lock)."})
final class MigrateCommand implements Callable<Integer> {

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;
    @Mixin DatabaseOptions db;
    @Mixin Output output;

    @Option(names = "--bridge-login", paramLabel = "LOGIN",
            description = "Bind the bridge group to this login (else bridge.login / QUEEN_BRIDGE_LOGIN; unset: bind nothing).")
    String bridgeLogin;

    @Override
    public Integer call() throws SQLException {
        Map<String, String> env = db.environment(root.env());
        if (bridgeLogin != null) {
            DatabaseOptions.put(env, MigrateSettings.definition(), MigrateSettings.BRIDGE_LOGIN, bridgeLogin);
        }
        // read before anything changes: a declaration the bridge would refuse is refused here, in the same words
        MigrateSettings settings = MigrateSettings.from(ConfigLoader.load(MigrateSettings.definition(), db.config, env));
        try (HikariDataSource ds = db.open(root.env(), SessionTimeouts.MIGRATION)) {
            MigrateResult r = Migrations.migrate(ds);
            String version = Migrations.appliedVersion(ds).orElse("none");
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("applied", r.migrationsExecuted);
            f.put("version", version);
            String text = "applied " + r.migrationsExecuted + " migration(s); schema version " + version;
            if (settings.bridgeGroup() != null) {
                BridgeGroupSettings group = settings.bridgeGroup();
                BridgeGroups.bind(ds, group.groupId(), settings.bridgeLogin(), group.topicTenants());
                f.put("bridgeGroup", Map.of("group", group.groupId(), "login", settings.bridgeLogin(), "topics", group.topicTenants()));
                text += "; bridge group " + group.groupId() + " bound to login " + settings.bridgeLogin() + " with topics " + group.topicTenants();
            }
            output.print(spec.commandLine().getOut(), text, f);
            return 0;
        }
    }
}
