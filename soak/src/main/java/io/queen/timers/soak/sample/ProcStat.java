package io.queen.timers.soak.sample;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time of a process from {@code /proc/<pid>/stat}, in clock ticks. PostgreSQL is a tree: the
 * postmaster, its live children, and (in the postmaster's {@code cutime}/{@code cstime}) every backend
 * that already exited, so a short-lived connection's CPU is not lost between two samples.
 */
public final class ProcStat {

    /** Fields 4 (ppid) and 14-17 of the stat line; the command name may hold spaces and ')'. */
    public record Times(long ppid, long utime, long stime, long cutime, long cstime) {
        public long own() {
            return utime + stime;
        }
    }

    private ProcStat() {
    }

    public static Times parse(String statLine) {
        String rest = statLine.substring(statLine.lastIndexOf(')') + 2);
        String[] f = rest.trim().split(" +");
        // rest starts at field 3 (state): ppid is field 4 -> f[1]; utime 14 -> f[11]; stime f[12]; cutime f[13]; cstime f[14]
        return new Times(Long.parseLong(f[1]), Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]), Long.parseLong(f[14]));
    }

    /** Own CPU ticks of one process, or -1 when it is gone. */
    public static long ticks(long pid) {
        Times t = read(pid);
        return t == null ? -1 : t.own();
    }

    /** The postmaster's own and reaped children's ticks plus every live child's own ticks; -1 when it is gone. */
    public static long treeTicks(long postmasterPid) {
        Times pm = read(postmasterPid);
        if (pm == null) {
            return -1;
        }
        long sum = pm.own() + pm.cutime() + pm.cstime();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path p : procs) {
                Times t = read(Long.parseLong(p.getFileName().toString()));
                if (t != null && t.ppid() == postmasterPid) {
                    sum += t.own();
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return sum;
    }

    private static Times read(long pid) {
        if (pid <= 0) {
            return null;
        }
        try {
            return parse(Files.readString(Path.of("/proc/" + pid + "/stat")));
        } catch (IOException | RuntimeException gone) {
            return null;
        }
    }

    /** The 1-minute load average, or NaN. */
    public static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }
}
