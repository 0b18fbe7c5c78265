package io.queen.timers.faults.inject;

/** The faults the harness injects; the flag name is what {@code --faults} and the report use. */
public enum FaultKind {
    KILL_BRIDGE("kill-bridge", "kill -9 of a bridge JVM, restarted 0.2-1.5 s later"),
    KILL_SWEEPER("kill-sweeper", "kill -9 of a sweeper JVM, restarted 0.2-1.5 s later"),
    PG_IMMEDIATE("pg-immediate", "PostgreSQL stopped with pg_ctl -m immediate (crash recovery), started 0-1 s later"),
    PG_FAST("pg-fast", "PostgreSQL stopped with pg_ctl -m fast, started 0-1 s later"),
    PG_TERMINATE("pg-terminate", "pg_terminate_backend of every client connection"),
    BROKER_KILL("broker-kill", "kill -9 of the Kafka broker JVM, restarted 0.2-1 s later on the same data and port (by its standby JVM)"),
    BROKER_OUTAGE("broker-outage", "the broker hung (SIGSTOP) 3.5-5 s, longer than the clients' request timeout, then SIGCONT"),
    PAUSE("pause", "SIGSTOP of a bridge or sweeper past the sweeper lease / the consumer session, then SIGCONT"),
    CLOCK_STEP("clock-step", "the wall clock of one sweeper stepped 30 s ahead or behind (libfaketime) for 30-40 s, then back");

    private final String flag;
    private final String description;

    FaultKind(String flag, String description) {
        this.flag = flag;
        this.description = description;
    }

    public String flag() {
        return flag;
    }

    public String description() {
        return description;
    }

    public static FaultKind ofFlag(String flag) {
        for (FaultKind k : values()) {
            if (k.flag.equals(flag)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown fault kind '" + flag + "'; known: " + java.util.Arrays.stream(values()).map(FaultKind::flag).toList());
    }
}
