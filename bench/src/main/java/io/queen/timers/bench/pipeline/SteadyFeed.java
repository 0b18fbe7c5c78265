package io.queen.timers.bench.pipeline;

import io.queen.timers.client.command.TimerCommand;
import java.time.Duration;
import java.util.Random;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * A steady feed of schedule commands through Kafka to a system that answers with {@code scheduled} and {@code fired}
 * events on a topic read by an {@link AuditWatch} (ours: the bridge and the sweeper and the audit topic; peer (b): the
 * same job built on db-scheduler and its events topic), measured as {@link SteadyReport} says: {@code rate} per second
 * for {@code seconds}, each due 1–10 s after it is produced ({@code Random(42)}), over {@code queues} queues named
 * {@code <phase>.q<i>}, 200-byte payloads. Snapshots at the start (the system reported ready), {@code first} seconds
 * in (the warm window's start, taken on a thread of its own so the feed keeps its pace), at the feed's end and when the
 * last item fired; the two hooks run at the window's start and at the feed's end (a profile dumps its statements there).
 */
final class SteadyFeed {

    private SteadyFeed() {}

    record Settings(String label, String what, String topic, String phase, int queues, int rate, int seconds, int firstSeconds,
            Duration patience) {}

    static SteadyReport.Run run(Settings s, KafkaProducer<byte[], byte[]> producer, AuditWatch events, SteadyReport.Meter meter,
            Consumer<SteadyReport.Snapshot> atWindow, Consumer<SteadyReport.Snapshot> atFeedEnd, Consumer<String> log) throws Exception {
        int n = s.rate() * s.seconds();
        Random random = new Random(42);
        SteadyReport.Snapshot s0 = meter.snap();
        SteadyReport.Snapshot[] s1 = new SteadyReport.Snapshot[1];
        long windowAt = s0.atMs() + s.firstSeconds() * 1000L;
        Thread window = new Thread(() -> {
            try {
                Thread.sleep(Math.max(0, windowAt - System.currentTimeMillis()));
                s1[0] = meter.snap();
                atWindow.accept(s1[0]);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "steady-window");
        boolean windowed = s.firstSeconds() < s.seconds();
        if (windowed) {
            window.start();
        }
        PipelineBench.send(producer, s.topic(), n, i -> TimerCommand.schedule(s.phase() + ".q" + (i % s.queues()), "k" + i)
                .delay(Duration.ofMillis(1_000 + random.nextInt(9_001))).txn("txn-" + s.phase() + "-" + i).payload(PipelineBench.payload(i)),
                s.phase(), s.rate());
        SteadyReport.Snapshot s2 = meter.snap();
        if (windowed) {
            window.join();
        } else {
            s1[0] = s2;
        }
        atFeedEnd.accept(s2);
        AuditWatch.Phase ph = events.phase(s.phase());
        long deadline = s2.atMs() + 10_000 + s.patience().toMillis();
        while (ph.fired.get() < n && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
        }
        // kept up: everything fired, the last within 15 s of the latest due time (the feed's end + 10 s), as db-scheduler's peer says
        boolean keptUp = ph.fired.get() >= n && ph.lastFiredMs - s2.atMs() <= 25_000;
        Thread.sleep(1_000); // the statistics collector's counters of the last transactions (flushed at most once a second)
        SteadyReport.Snapshot s3 = meter.snap();
        long[][] fired = ph.fired();
        log.accept(String.format("%s: %,d produced in %.1f s (%,.0f/s); the last fired event %.1f s after the last was produced (the last is due"
                + " 1-10 s after it is produced)", s.phase(), n, (s2.atMs() - s0.atMs()) / 1000.0, n * 1000.0 / (s2.atMs() - s0.atMs()),
                (ph.lastFiredMs - s2.atMs()) / 1000.0));
        SteadyReport.figure(s.label(), "produced_per_s", n * 1000.0 / (s2.atMs() - s0.atMs()), "timers/s");
        SteadyReport.figure(s.label(), "last_fired_after_last_sent_s", (ph.lastFiredMs - s2.atMs()) / 1000.0, "s");
        return new SteadyReport.Run(s.label(), s.what(), "timer", n, s0, s1[0], s2, s3, SteadyReport.longs(ph.scheduledAt), fired[0], fired[1],
                keptUp);
    }
}
