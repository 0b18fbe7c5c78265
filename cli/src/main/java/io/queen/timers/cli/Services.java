package io.queen.timers.cli;

import io.queen.timers.core.ops.ServiceHost;
import java.util.Map;

/**
 * Starts the bridge and the sweeper in this JVM (the local stack) with settings given exactly as
 * docker-compose gives them: environment variable names ({@code QUEEN_JDBC_URL}, ...).
 */
public final class Services {

    private Services() {}

    public static ServiceHost bridge(Map<String, String> env) {
        return BridgeCommand.start(env);
    }

    public static ServiceHost sweeper(Map<String, String> env) {
        return SweeperCommand.start(env);
    }
}
