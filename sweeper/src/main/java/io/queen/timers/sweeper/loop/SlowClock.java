package io.queen.timers.sweeper.loop;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One daemon thread that runs a task at a fixed delay, off the fire path: the sweeper's slow clocks
 * ({@link CleanupClock}, {@link DeadLetterClock}, {@link RecurringSeriesClock}) each own one. The task handles its own failures; one that
 * escaped would end the schedule, so the owners catch everything.
 */
final class SlowClock implements AutoCloseable {

    private final ScheduledExecutorService executor;

    SlowClock(String threadName, Duration firstRunAfter, Duration interval, Runnable task) {
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        executor.scheduleWithFixedDelay(task, firstRunAfter.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
