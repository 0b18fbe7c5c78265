package io.queen.timers.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Ctrl-C stops the whole local stack cleanly: the stack runs as its own JVM, as a user starts it, and
 * gets SIGTERM (the JVM runs the same shutdown hooks for SIGINT); afterwards nothing listens any more
 * on its Kafka, PostgreSQL or HTTP ports, so no embedded server outlived it.
 */
class LocalStopIT {

    @Test
    void aSignalStopsKafkaPostgresAndTheServicesAndTheProcessExits() throws Exception {
        // Port 0 everywhere: the stack binds what it is given and prints it. A port chosen here and passed in
        // could be taken in between (the sweeper's is the bridge's + 1, inside the ephemeral range that every
        // client connection of a concurrent build draws from): the test failed so while other builds ran.
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                "io.queen.timers.local.LocalLauncher", "local", "--temp", "--no-demo",
                "--kafka-port", "0", "--pg-port", "0", "--http-port", "0")
                .redirectErrorStream(true).start();
        List<String> out = new ArrayList<>();
        Map<String, Integer> ports = new HashMap<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null && ports.size() < BANNER.size()) {
                out.add(line);
                for (Map.Entry<String, Pattern> b : BANNER.entrySet()) {
                    Matcher m = b.getValue().matcher(line);
                    if (m.find()) {
                        ports.put(b.getKey(), Integer.parseInt(m.group(1)));
                    }
                }
            }
            assertThat(String.join("\n", out)).contains("queen-timers local stack is up");
            assertThat(ports).as(String.join("\n", out)).containsOnlyKeys(BANNER.keySet());
            for (Map.Entry<String, Integer> e : ports.entrySet()) {
                assertThat(listening(e.getValue())).as(e.getKey() + " listening").isTrue();
            }

            p.destroy();   // SIGTERM
            Thread drain = new Thread(() -> r.lines().forEach(out::add));
            drain.setDaemon(true);
            drain.start();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the stack exits after the signal:\n" + String.join("\n", out)).isTrue();
        } finally {
            p.destroyForcibly();
        }
        for (Map.Entry<String, Integer> e : ports.entrySet()) {
            assertThat(listening(e.getValue())).as(e.getKey() + " stopped").isFalse();
        }
    }

    /** The banner's lines that name each server's port (LocalCommand's "stack is up" block). */
    private static final Map<String, Pattern> BANNER = Map.of(
            "Kafka", Pattern.compile("^\\s+Kafka\\s+127\\.0\\.0\\.1:(\\d+)"),
            "PostgreSQL", Pattern.compile("^\\s+PostgreSQL\\s+jdbc:postgresql://127\\.0\\.0\\.1:(\\d+)/"),
            "bridge HTTP", Pattern.compile("^\\s+bridge\\s+http://127\\.0\\.0\\.1:(\\d+)/"),
            "sweeper HTTP", Pattern.compile("^\\s+sweeper\\s+http://127\\.0\\.0\\.1:(\\d+)/"));

    private static boolean listening(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException refused) {
            return false;
        }
    }
}
