package io.queen.timers.service;

import io.queen.timers.cli.QueenTimers;
import java.io.PrintWriter;

/**
 * The service-only jar's main: the launcher's subcommands except {@code local}, whose embedded broker and
 * PostgreSQL this jar does not carry. The image (docker/Dockerfile) runs it: a bridge, a sweeper, the
 * migration job and an operator's tools need nothing else.
 */
public final class ServiceLauncher {

    private ServiceLauncher() {}

    public static void main(String[] args) {
        System.exit(QueenTimers.serviceCommandLine(new QueenTimers(), new PrintWriter(System.out, true), new PrintWriter(System.err, true))
                .execute(args));
    }
}
