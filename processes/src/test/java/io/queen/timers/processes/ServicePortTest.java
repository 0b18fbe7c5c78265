package io.queen.timers.processes;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** The ports the fault harness restarts services on stay out of the kernel's ephemeral range (see Launcher.servicePort). */
class ServicePortTest {

    @Test
    void aServicePortIsFreeAndBelowTheEphemeralRange() throws Exception {
        int low = Launcher.ephemeralLow();
        assertThat(low).isGreaterThan(10_001);
        for (int i = 0; i < 20; i++) {
            int port = Launcher.servicePort();
            assertThat(port).isBetween(10_000, low - 1);
            try (ServerSocket s = new ServerSocket(port)) {
                assertThat(s.getLocalPort()).isEqualTo(port);
            }
        }
    }
}
