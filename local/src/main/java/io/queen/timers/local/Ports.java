package io.queen.timers.local;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * Checks a port before a server is started on it. The in-process Kafka broker treats a bind failure
 * as fatal and halts the whole JVM, so "port in use" has to be found out first, as one line naming the flag.
 */
final class Ports {

    private Ports() {}

    static void requireFree(int port, String flag) {
        if (port == 0) {
            return;
        }
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        } catch (IOException e) {
            throw new IllegalArgumentException("port " + port + " is in use (another local stack?): choose another with " + flag);
        }
    }
}
