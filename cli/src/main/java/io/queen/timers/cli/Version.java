package io.queen.timers.cli;

import picocli.CommandLine.IVersionProvider;

/** The version from the jar's manifest (set by the build), "dev" when run from classes. */
public final class Version implements IVersionProvider {
    @Override
    public String[] getVersion() {
        String v = QueenTimers.class.getPackage().getImplementationVersion();
        return new String[] {"queen-timers " + (v == null ? "dev" : v)};
    }
}
