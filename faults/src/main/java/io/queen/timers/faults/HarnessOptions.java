package io.queen.timers.faults;

import io.queen.timers.faults.inject.FaultKind;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;

/**
 * The harness's flags (one owner): {@code --seed}, sizes, fractions, the fault plan per kind, and
 * switches so a run can leave out what a known defect breaks ({@code --hostile-fraction 0},
 * {@code --faults pg-immediate=0}).
 */
record HarnessOptions(long seed, int commands, int keys, long produceMs, long faultWindowMs, Map<FaultKind, Integer> faults,
                      double hostileFraction, double poisonFraction, double largeFraction, double recurringFraction, int bridges, int sweepers,
                      Path launcherJar, Path workDir, boolean keep, long settleTimeoutMs, boolean strictExits,
                      boolean strictFaults, boolean durable, long tailMs, int minFaultFreeFires) {

    static final String USAGE = """
            usage: fault-harness [--seed N] [--commands N] [--keys K] [--produce-seconds S] [--fault-window-seconds S]
                                 [--faults kind=count,...] [--no-faults] [--hostile-fraction F] [--poison-fraction F]
                                 [--large-fraction F] [--recurring-fraction F] [--bridges N] [--sweepers N] [--jar local/target/queen-timers.jar]
                                 [--work-dir DIR] [--keep] [--settle-timeout-seconds S] [--strict-exits]
                                 [--strict-faults] [--durable] [--fault-free-tail-seconds S] [--min-fault-free-fires N]
            fault kinds: kill-bridge kill-sweeper pg-immediate pg-fast pg-terminate broker-kill broker-outage pause clock-step""";

    /**
     * The short run's plan (CI): 30 of every kind, what the issue asks of it, and the clock step's two (one sweeper's wall
     * clock 30 s ahead, then 30 s behind). One broker and one PostgreSQL take their faults one after another, so the broker's
     * 60 set the run's length (docs/fault-harness.md).
     */
    static Map<FaultKind, Integer> defaultFaults() {
        Map<FaultKind, Integer> m = new EnumMap<>(FaultKind.class);
        for (FaultKind k : FaultKind.values()) {
            m.put(k, SHORT_RUN_FAULTS_PER_KIND);
        }
        // Each direction once: a third step would only repeat one of them, and each holds the sweeper's clock off for 30-40 s
        // of the window (they run inside it, beside the other kinds, so the run is no longer for them).
        m.put(FaultKind.CLOCK_STEP, CLOCK_STEPS);
        return m;
    }

    static final int CLOCK_STEPS = 2;

    static final int SHORT_RUN_FAULTS_PER_KIND = 30;

    static HarnessOptions parse(String[] args) {
        long seed = System.nanoTime() & 0xFFFF_FFFFL;
        int commands = 20_000;
        Integer keys = null;
        long produceMs = 240_000;
        Long windowMs = null;
        Map<FaultKind, Integer> faults = defaultFaults();
        double hostile = 0.03;
        double poison = 0.005;
        double large = 0.003;
        // 1 in 500: ~40 series in CI's 20,000 commands, each 3-8 fires, beside ~20,000 one-shot timers (issue 28).
        double recurring = 0.002;
        int bridges = 2;
        int sweepers = 3;
        Path jar = Path.of("local/target/queen-timers.jar");
        Path work = null;
        boolean keep = false;
        long settleMs = 180_000;
        boolean strictExits = false;
        boolean strictFaults = false;
        boolean durable = false;
        // After the faults and their recovery budget, a minute of load whose fires meet no fault (issue 49, point 2).
        long tailMs = 60_000;
        Integer minFree = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--commands" -> commands = Integer.parseInt(args[++i]);
                case "--keys" -> keys = Integer.parseInt(args[++i]);
                case "--produce-seconds" -> produceMs = Long.parseLong(args[++i]) * 1000;
                case "--fault-window-seconds" -> windowMs = Long.parseLong(args[++i]) * 1000;
                case "--faults" -> {
                    for (String kv : args[++i].split(",")) {
                        String[] p = kv.split("=", 2);
                        faults.put(FaultKind.ofFlag(p[0].trim()), Integer.parseInt(p[1].trim()));
                    }
                }
                case "--no-faults" -> faults.replaceAll((k, v) -> 0);
                case "--hostile-fraction" -> hostile = Double.parseDouble(args[++i]);
                case "--poison-fraction" -> poison = Double.parseDouble(args[++i]);
                case "--large-fraction" -> large = Double.parseDouble(args[++i]);
                case "--recurring-fraction" -> recurring = Double.parseDouble(args[++i]);
                case "--bridges" -> bridges = Integer.parseInt(args[++i]);
                case "--sweepers" -> sweepers = Integer.parseInt(args[++i]);
                case "--jar" -> jar = Path.of(args[++i]);
                case "--work-dir" -> work = Path.of(args[++i]);
                case "--keep" -> keep = true;
                case "--settle-timeout-seconds" -> settleMs = Long.parseLong(args[++i]) * 1000;
                case "--strict-exits" -> strictExits = true;
                case "--strict-faults" -> strictFaults = true;
                case "--durable" -> durable = true;
                case "--fault-free-tail-seconds" -> tailMs = Long.parseLong(args[++i]) * 1000;
                case "--min-fault-free-fires" -> minFree = Integer.parseInt(args[++i]);
                case "-h", "--help" -> throw new IllegalArgumentException(USAGE);
                default -> throw new IllegalArgumentException("unknown flag " + a + "\n" + USAGE);
            }
        }
        if (work == null) {
            work = Path.of("faults/target/run-" + seed);
        }
        return new HarnessOptions(seed, commands, keys == null ? Math.max(10, commands / 100) : keys, produceMs,
                windowMs == null ? produceMs : windowMs, faults, hostile, poison, large, recurring, bridges, sweepers, jar, work, keep, settleMs, strictExits,
                strictFaults, durable, tailMs,
                // with faults, the tail must give the fault-free bounds something to judge; without, every fire is fault-free
                minFree != null ? minFree : faults.values().stream().anyMatch(n -> n > 0) ? 500 : 0);
    }
}
