package io.queen.timers.http.send;

import io.queen.timers.client.verdict.CommandSender;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A fixed set of the client's {@link CommandSender}s for one command topic and its audit topic: the same sender a
 * Java producer or the CLI uses, so a command from HTTP is written, keyed and answered exactly as one from Kafka.
 * A sender is not thread-safe, so a request borrows one for its send and its wait.
 *
 * <p>The pool is also the tenant's share of the API's threads: a request that waits on verdicts holds a thread and a
 * sender, so while the tenant's topic is backlogged (its bridge behind or stopped) at most {@code size} of its requests
 * wait, and one that finds no sender free is refused at once instead of waiting for one on a thread another tenant's
 * request could use. PRICE: each sender's audit consumer reads the whole audit topic (every verdict of the tenant, not
 * only its own), so N senders read it N times; and a burst of more than {@code size} concurrent requests of one tenant
 * has its excess refused (the caller retries), even when the bridge is keeping up.
 */
public final class SenderPool implements AutoCloseable {

    /**
     * Longest wait for Kafka to acknowledge a request's commands (a sender's send timeout, and the second its wait for each
     * acknowledgement adds); the verdicts are awaited after it.
     */
    public static final Duration ACKNOWLEDGED_WITHIN = CommandSender.DEFAULT_SEND_TIMEOUT.plusSeconds(1);

    private final BlockingQueue<CommandSender> idle;
    private final List<CommandSender> all = new ArrayList<>();

    /** {@code producer}, {@code consumer}: each client's settings (kafka.* with kafka.producer.* / kafka.consumer.* on top). */
    public SenderPool(Map<String, Object> producer, Map<String, Object> consumer, String auditTopic, int size) {
        this.idle = new ArrayBlockingQueue<>(size);
        try {
            for (int i = 0; i < size; i++) {
                Map<String, Object> p = new java.util.HashMap<>(producer);
                Map<String, Object> c = new java.util.HashMap<>(consumer);
                p.putIfAbsent("client.id", "queen-timers-api-" + auditTopic + "-" + i);
                c.putIfAbsent("client.id", "queen-timers-api-verdicts-" + auditTopic + "-" + i);
                CommandSender s = new CommandSender(p, c, auditTopic, CommandSender.DEFAULT_SEND_TIMEOUT);
                all.add(s);
                idle.add(s);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Sends {@code commands} and awaits their verdicts; empty, with nothing sent, when every sender is busy now. */
    public java.util.Optional<List<CommandSender.Answer>> sendAll(List<ProducerRecord<byte[], byte[]>> commands, Duration timeout) {
        CommandSender s = idle.poll();
        if (s == null) {
            return java.util.Optional.empty();
        }
        try {
            return java.util.Optional.of(s.sendAllAndAwait(commands, timeout));
        } finally {
            idle.add(s);
        }
    }

    @Override
    public void close() {
        all.forEach(CommandSender::close);
    }
}
