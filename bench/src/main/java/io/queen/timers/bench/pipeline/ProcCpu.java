package io.queen.timers.bench.pipeline;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU time of processes from /proc (utime + stime, clock ticks of 10 ms). PostgreSQL counts the postmaster,
 * every live child (backends, WAL writer, checkpointer, autovacuum) and, through the postmaster's
 * cutime/cstime, the children that already exited. Public for the sweeper package's DbSchedulerSteadyBench.
 */
public final class ProcCpu {

    private static final double TICK_SECONDS = 0.01; // getconf CLK_TCK = 100 on Linux

    private ProcCpu() {}

    /** CPU seconds of one process (its threads included); 0 if it is gone. */
    public static double seconds(long pid) {
        long[] f = fields(pid);
        return f == null ? 0 : (f[0] + f[1]) * TICK_SECONDS;
    }

    /** CPU seconds of a process and all its children, live and exited (PostgreSQL's process tree). */
    public static double treeSeconds(long rootPid) {
        long[] root = fields(rootPid);
        if (root == null) {
            return 0;
        }
        double total = (root[0] + root[1] + root[2] + root[3]) * TICK_SECONDS;
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) procs::iterator) {
                String name = p.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                long[] f = fields(Long.parseLong(name));
                if (f != null && f[4] == rootPid) {
                    total += (f[0] + f[1]) * TICK_SECONDS;
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc", e);
        }
        return total;
    }

    /**
     * CPU seconds of each thread of a process by its name (/proc/pid/task/tid/comm: the JVM gives each thread its Java
     * name, cut to 15 characters; the digits at the end of a pool's threads folded into one row: "GC Thread#N"), GC
     * and JIT threads included, which a flight recording's execution samples never see.
     */
    public static java.util.Map<String, Double> threads(long pid) {
        java.util.Map<String, Double> out = new java.util.TreeMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    String name = Files.readString(t.resolve("comm")).trim().replaceAll("\\d+$", "N");
                    String stat = Files.readString(t.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    out.merge(name, (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK_SECONDS, Double::sum);
                } catch (IOException | RuntimeException gone) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            return out; // the process is gone
        }
        return out;
    }

    /** utime, stime, cutime, cstime, ppid of /proc/pid/stat; null if the process is gone. */
    private static long[] fields(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            // the command name (field 2) is in parentheses and may contain spaces: parse after the last ')'
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // f[0] is field 3 (state): ppid = field 4, utime = 14, stime = 15, cutime = 16, cstime = 17
            return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]), Long.parseLong(f[14]),
                    Long.parseLong(f[1])};
        } catch (IOException | RuntimeException gone) {
            return null;
        }
    }
}
