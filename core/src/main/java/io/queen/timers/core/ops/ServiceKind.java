package io.queen.timers.core.ops;

import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import java.sql.SQLException;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * One service (bridge, sweeper, HTTP API) as whoever runs it from its settings sees it: its name (the launcher's
 * subcommand, the {@link ServiceHost}'s name), the group role its login is a member of, the definition its settings are
 * read with, how it starts in this JVM (bare, or under a {@link ServiceHost} with its /health and /metrics port), and what
 * the schema's owner records for its login before it runs. Each service declares its own ({@code BridgeMain.SERVICE},
 * {@code SweeperMain.SERVICE}, {@code HttpMain.SERVICE}), so a stack that runs several (the local command, the test
 * stack) starts each as its launcher subcommand does, without knowing its settings record.
 *
 * @param name        the launcher's subcommand and the host's name
 * @param loginGroup  the group role ({@link io.queen.timers.core.db.DatabaseRole}) a login of this service is a member of
 * @param definition  its settings' definition (a new one per call: a {@link ConfigDef} is built, not shared)
 * @param starter     starts it in this JVM with the caller's {@link Dependencies} (its registry, health, telemetry)
 * @param host        starts it under a {@link ServiceHost}, as the launcher does
 * @param declaration what the owner records for the login before the service runs (nothing but for the bridge)
 */
public record ServiceKind<S extends AutoCloseable>(String name, String loginGroup, Supplier<ConfigDef> definition,
        Starter<S> starter, Function<Config, ServiceHost> host, Declaration declaration) {

    /** Starts the service in this JVM from settings parsed with its {@link #definition}. */
    @FunctionalInterface
    public interface Starter<S> {
        S start(Config settings, Dependencies dependencies);
    }

    /**
     * What the schema's owner records for {@code login} from the service's own settings, as {@code queen-timers migrate}
     * does from the bridge's declaration: a least-privilege login may not record it itself.
     */
    @FunctionalInterface
    public interface Declaration {
        void declare(Config settings, DataSource owner, String login) throws SQLException;
    }

    /** A service whose login needs nothing recorded by the owner. */
    public static final Declaration NOTHING = (settings, owner, login) -> {};
}
