package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Ctrl-C stops the whole local stack cleanly: the stack runs as its own JVM, as a user starts it, and
 * gets SIGTERM (the JVM runs the same shutdown hooks for SIGINT); afterwards nothing listens any more
 * on its Kafka, PostgreSQL or HTTP ports, so no embedded server outlived it.
 */
class LocalStopTest {

    @Test
    void aSignalStopsKafkaPostgresAndTheServicesAndTheProcessExits() throws Exception {
        int kafka = freePort();
        int pg = freePort();
        int http = freePort();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                "io.queen.timers.cli.QueenTimers", "local", "--temp", "--no-demo",
                "--kafka-port", Integer.toString(kafka), "--pg-port", Integer.toString(pg), "--http-port", Integer.toString(http))
                .redirectErrorStream(true).start();
        List<String> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                out.add(line);
                if (line.contains("queen-timers local stack is up")) {
                    break;
                }
            }
            assertThat(String.join("\n", out)).contains("queen-timers local stack is up");
            assertThat(listening(kafka)).isTrue();
            assertThat(listening(pg)).isTrue();

            p.destroy();   // SIGTERM
            Thread drain = new Thread(() -> r.lines().forEach(out::add));
            drain.setDaemon(true);
            drain.start();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the stack exits after the signal:\n" + String.join("\n", out)).isTrue();
        } finally {
            p.destroyForcibly();
        }
        assertThat(listening(kafka)).as("Kafka stopped").isFalse();
        assertThat(listening(pg)).as("PostgreSQL stopped").isFalse();
        assertThat(listening(http)).as("bridge HTTP stopped").isFalse();
    }

    private static boolean listening(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException refused) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
