package io.queen.timers.cli;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.sql.Migrations;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.flywaydb.core.api.output.MigrateResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** Applies the schema (the one-shot step of docker-compose). Safe to run beside running services. */
@Command(name = "migrate", mixinStandardHelpOptions = true,
        description = {"Apply the schema migrations and print the version.",
            "Safe beside running services and when several run at once (advisory lock)."})
final class MigrateCommand implements Callable<Integer> {

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;
    @Mixin DatabaseOptions db;
    @Mixin Output output;

    @Override
    public Integer call() {
        try (HikariDataSource ds = db.open(root.env(), SessionTimeouts.MIGRATION)) {
            MigrateResult r = Migrations.migrate(ds);
            String version = Migrations.appliedVersion(ds).orElse("none");
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("applied", r.migrationsExecuted);
            f.put("version", version);
            output.print(spec.commandLine().getOut(),
                    "applied " + r.migrationsExecuted + " migration(s); schema version " + version, f);
            return 0;
        }
    }
}
