package io.queen.timers.sweeper.claim;

import java.time.Instant;

/**
 * PostgreSQL's clock as a claim read it ({@code clock_timestamp()} as the claim's statement returned its rows), carried on
 * by this JVM's monotonic clock ({@link System#nanoTime}): what a recurring timer's catch-up is planned by (which
 * occurrences are already due, where the series resumes; docs/recurring.md "The fire of an occurrence"). Never this host's
 * wall clock: due-ness is the database's (the claim, the fire's lease check, the backoffs are all {@code now()} in SQL),
 * and a host whose clock is off by seconds would skip occurrences not yet due, or fail to skip due ones.
 *
 * <p>PRICE: {@link #now()} runs behind the database's clock by the time between the statement's reading and
 * {@code readAtNanos} (the claim's rows on the wire: milliseconds), plus the two clocks' drift since the claim (parts per
 * million over at most a lease). Behind, never ahead: a plan may name as next an occurrence that became due within that
 * gap (it fires at once, that late), but never skips one that is not due yet. No round trip of its own: one column of
 * the claim's rows.
 *
 * @param read        the database's clock when the claim's statement produced its rows
 * @param readAtNanos {@link System#nanoTime} once this JVM had them all
 */
public record DatabaseTime(Instant read, long readAtNanos) {

    /** The database's clock now, as far as this JVM can tell without asking it. */
    public Instant now() {
        return read.plusNanos(System.nanoTime() - readAtNanos);
    }
}
