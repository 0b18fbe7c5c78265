package io.queen.timers.sweeper.loop;

import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * One per sweeper process: the loops hold it shared from their claim to the end of their delivery, and a
 * group of suspects ({@link SuspectPolicy}) is fired holding it alone, so that when a suspect kills the
 * process nothing else is in its hands and the death is counted against that group only. Fair, so a waiting
 * group is not starved by loops that keep claiming. PRICE: while a group fires, the other loops of the
 * process wait (a group is at most 16 timers, one fire).
 */
public final class FireGate {

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock(true);

    /** Work that may throw what a cycle throws. */
    interface Work<T, E extends Exception> {
        T run() throws E;
    }

    <T, E extends Exception> T shared(Work<T, E> work) throws E {
        lock.readLock().lock();
        try {
            return work.run();
        } finally {
            lock.readLock().unlock();
        }
    }

    <T, E extends Exception> T alone(Work<T, E> work) throws E {
        lock.writeLock().lock();
        try {
            return work.run();
        } finally {
            lock.writeLock().unlock();
        }
    }
}
