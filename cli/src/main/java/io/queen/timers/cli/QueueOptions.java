package io.queen.timers.cli;

import io.queen.timers.core.config.CommonSettings;
import java.util.UUID;
import picocli.CommandLine.Option;

/** A queue as an operator names it: its name, under a tenant (the default tenant unless told). */
public final class QueueOptions {

    @Option(names = {"-q", "--queue"}, required = true, paramLabel = "QUEUE", description = "Queue name, e.g. orders.reminders.")
    String queue;

    @Option(names = "--tenant", paramLabel = "UUID", defaultValue = CommonSettings.DEFAULT_TENANT,
            description = "Tenant of the queue (default: ${DEFAULT-VALUE}).")
    UUID tenant;
}
