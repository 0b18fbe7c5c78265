package io.queen.timers.processes;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process with a standby: a restart is a different process that was started beforehand and waited for
 * its word, so the work after a kill begins without a JVM start on its path (the fault harness's broker).
 * The command here is a shell that writes when it starts waiting and when it was told to work.
 */
class ManagedProcessStandbyTest {

    @TempDir
    Path dir;

    @Test
    void aRestartHandsOverToTheStandbyStartedBeforeIt() throws Exception {
        Path log = dir.resolve("p.log");
        ManagedProcess p = ManagedProcess.withStandby("p",
                List.of("sh", "-c", "echo \"waiting $$\"; read word; echo \"working $$ ($word)\"; sleep 60"), Map.of(), log);
        try {
            p.start();
            long first = p.pid();
            awaitLog(log, "working " + first + " (start)");

            p.prepareStandby();
            // the first process's own "waiting" line is already there: wait for the standby's (failed under load before)
            long standbyWaitedBeforeTheKill = awaitOtherWaitingPid(log, first);
            p.kill9();
            p.start();

            assertThat(p.pid()).as("the restart is the standby, started before the kill").isEqualTo(standbyWaitedBeforeTheKill);
            awaitLog(log, "working " + standbyWaitedBeforeTheKill + " (start)");
            assertThat(p.isAlive()).isTrue();
            assertThat(p.unplannedExit()).isNull();
        } finally {
            p.stop();
        }
        assertThat(p.isAlive()).isFalse();
    }

    @Test
    void withoutAStandbyReadyARestartStartsOne() throws Exception {
        Path log = dir.resolve("q.log");
        ManagedProcess p = ManagedProcess.withStandby("q",
                List.of("sh", "-c", "read word; echo \"working $$ ($word)\"; sleep 60"), Map.of(), log);
        try {
            p.start();
            awaitLog(log, "working " + p.pid() + " (start)");
            p.kill9();
            p.start();
            awaitLog(log, "working " + p.pid() + " (start)");
            assertThat(Files.readString(log, StandardCharsets.UTF_8)).contains("(no standby ready: a new one)");
        } finally {
            p.stop();
        }
    }

    private static List<Long> waitingPids(Path log) throws Exception {
        return Files.readAllLines(log, StandardCharsets.UTF_8).stream().filter(l -> l.startsWith("waiting "))
                .map(l -> Long.parseLong(l.substring("waiting ".length()).trim())).toList();
    }

    private static long awaitOtherWaitingPid(Path log, long first) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            var other = Files.exists(log) ? waitingPids(log).stream().filter(pid -> pid != first).findFirst() : java.util.Optional.<Long>empty();
            if (other.isPresent()) {
                return other.get();
            }
            assertThat(System.currentTimeMillis()).as("a standby's 'waiting' line in " + log).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static void awaitLog(Path log, String text) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (!(Files.exists(log) && Files.readString(log, StandardCharsets.UTF_8).contains(text))) {
            assertThat(System.currentTimeMillis()).as("'" + text + "' in " + log).isLessThan(deadline);
            Thread.sleep(50);
        }
    }
}
