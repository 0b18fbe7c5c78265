package io.queen.timers.core.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * /health/ready answers from memory: with a database and a broker that accept connections and never
 * answer, many concurrent requests are all answered at once (before, each request probed both, holding
 * one of the two HTTP threads for seconds, so a few slow clients starved the server).
 */
class ReadyFromMemoryTest {

    @Test
    void readinessRequestsNeverWaitForAHungDatabaseOrBroker() throws Exception {
        try (BlackHole pg = new BlackHole(); BlackHole kafka = new BlackHole()) {
            Map<String, String> raw = new HashMap<>();
            raw.put(CommonSettings.JDBC_URL, "jdbc:postgresql://127.0.0.1:" + pg.port() + "/queen");
            raw.put(CommonSettings.KAFKA_BOOTSTRAP, "127.0.0.1:" + kafka.port());
            raw.put(CommonSettings.HTTP_PORT, "0");
            raw.put(CommonSettings.HTTP_BIND_ADDRESS, "127.0.0.1");
            Config config = CommonSettings.definition().parse(raw);
            ServiceHost host = ServiceHost.start("bridge", CommonSettings.from(config), deps -> new ServiceHost.Running(() -> {}, () -> {}));
            try {
                HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
                List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    inFlight.add(http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + host.httpPort() + "/health/ready"))
                            .timeout(Duration.ofSeconds(3)).build(), HttpResponse.BodyHandlers.ofString()));
                }
                for (CompletableFuture<HttpResponse<String>> f : inFlight) {
                    HttpResponse<String> r = f.get();
                    assertThat(r.statusCode()).isEqualTo(503);
                    assertThat(r.body()).contains("database: ").contains("kafka: ");
                }
            } finally {
                host.close();
            }
        }
    }

    /** Accepts connections and never says a word. */
    static final class BlackHole implements AutoCloseable {
        private final ServerSocket server = new ServerSocket(0);
        private final List<Socket> held = new ArrayList<>();
        private final Thread acceptor;

        BlackHole() throws IOException {
            acceptor = new Thread(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket s = server.accept();
                        synchronized (held) {
                            held.add(s);
                        }
                    } catch (IOException closed) {
                        return;
                    }
                }
            }, "black-hole");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return server.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            server.close();
            synchronized (held) {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }
}
