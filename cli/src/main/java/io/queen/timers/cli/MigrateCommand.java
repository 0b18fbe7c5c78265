package io.queen.timers.cli;

import static io.queen.timers.core.config.ConfigDef.Type.STRING;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.sql.BridgeGroups;
import io.queen.timers.sql.Migrations;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
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
 * that runs it, with its command topics' tenants (V135): the schema owner's step, never a bridge's first call.
 */
@Command(name = "migrate", mixinStandardHelpOptions = true,
        description = {"Apply the schema migrations and print the version.",
            "With bridge.login (QUEEN_BRIDGE_LOGIN or --bridge-login): bind the bridge group (bridge.group.id) to that login"
                    + " and its command topics (command.topics) to their tenants (command.topic.tenants, topic.<name>.tenant),"
                    + " as the bridge reads them (docs/schema-and-roles.md#database-roles).",
            "Safe beside running services and when several run at once (advisory lock)."})
final class MigrateCommand implements Callable<Integer> {

    /** The login a bridge group runs as: declared to the owner's migrate, never chosen by the bridge (V135). */
    static final String BRIDGE_LOGIN = "bridge.login";

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;
    @Mixin DatabaseOptions db;
    @Mixin Output output;

    @Option(names = "--bridge-login", paramLabel = "LOGIN",
            description = "Bind the bridge group to this login (else bridge.login / QUEEN_BRIDGE_LOGIN; unset: bind nothing).")
    String bridgeLogin;

    /** What `migrate` reads: the database's keys, and the bridge group's declaration. */
    static ConfigDef definition() {
        return DatabaseOptions.definition()
                .include(BridgeSettings.declaration())
                .define(BRIDGE_LOGIN, STRING, "", null,
                        "The database login the bridge group (bridge.group.id) runs as: `migrate` binds the group to it, and its"
                                + " command topics to their tenants as the bridge reads them. Empty: no group is bound (a group"
                                + " nobody bound is refused to every least-privilege login).");
    }

    @Override
    public Integer call() throws SQLException {
        Map<String, String> env = db.environment(root.env());
        if (bridgeLogin != null) {
            DatabaseOptions.put(env, definition(), BRIDGE_LOGIN, bridgeLogin);
        }
        Config declared = ConfigLoader.load(definition(), db.config, env);
        String login = declared.string(BRIDGE_LOGIN).trim();
        // read before anything changes: a declaration the bridge would refuse is refused here, in the same words
        Map<String, UUID> tenants = login.isEmpty() ? Map.of() : BridgeSettings.tenants(declared);
        try (HikariDataSource ds = db.open(root.env(), SessionTimeouts.MIGRATION)) {
            MigrateResult r = Migrations.migrate(ds);
            String version = Migrations.appliedVersion(ds).orElse("none");
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("applied", r.migrationsExecuted);
            f.put("version", version);
            String text = "applied " + r.migrationsExecuted + " migration(s); schema version " + version;
            if (!login.isEmpty()) {
                String group = declared.string(BridgeSettings.GROUP_ID);
                BridgeGroups.bind(ds, group, login, tenants);
                f.put("bridgeGroup", Map.of("group", group, "login", login, "topics", tenants));
                text += "; bridge group " + group + " bound to login " + login + " with topics " + tenants;
            }
            output.print(spec.commandLine().getOut(), text, f);
            return 0;
        }
    }
}
