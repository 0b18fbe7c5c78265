package io.queen.timers.cli.local;

import io.queen.timers.cli.Output;

/** What {@code local} prints for one audit event, without a broker (for OutputHygieneIT). */
public final class AuditWatcherHygiene {

    private AuditWatcherHygiene() {}

    public static String printed(String eventJson, boolean json) {
        try {
            var node = Output.mapper().readTree(eventJson);
            return AuditWatcher.printable(AuditWatcher.humanLine(node), node.toString(), json);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
