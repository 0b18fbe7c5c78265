package io.queen.timers.processes.stack;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A process's TCP connections to one port, from /proc (Linux): the socket inodes among its file
 * descriptors, matched with /proc/net/tcp and tcp6. The local port of such a connection is what the
 * server sees as the client's port (pg_stat_activity.client_port), which ties a backend to its process.
 */
final class ProcSockets {

    private ProcSockets() {
    }

    static List<Integer> localPortsTo(long pid, int remotePort) {
        List<Integer> ports = new ArrayList<>();
        if (pid <= 0) {
            return ports;
        }
        Set<String> inodes = new HashSet<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/" + pid + "/fd"))) {
            for (Path fd : fds) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        inodes.add(target.substring(8, target.length() - 1));
                    }
                } catch (IOException closedMeanwhile) {
                    // a descriptor closed while listed: not a connection any more
                }
            }
        } catch (IOException gone) {
            return ports;
        }
        for (String table : List.of("/proc/" + pid + "/net/tcp", "/proc/" + pid + "/net/tcp6")) {
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of(table));
            } catch (IOException e) {
                continue;
            }
            for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                String[] f = line.trim().split("\\s+");
                if (f.length < 10 || !inodes.contains(f[9])) {
                    continue;
                }
                int local = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1), 16);
                int remote = Integer.parseInt(f[2].substring(f[2].indexOf(':') + 1), 16);
                if (remote == remotePort) {
                    ports.add(local);
                }
            }
        }
        return ports;
    }
}
