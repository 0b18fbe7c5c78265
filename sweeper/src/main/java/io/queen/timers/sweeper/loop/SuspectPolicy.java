package io.queen.timers.sweeper.loop;

import io.queen.timers.sweeper.claim.ClaimedTimer;
import java.util.ArrayList;
import java.util.List;

/**
 * How a claim's suspects are fired: timers a lease of which ran out in a sweeper's hands ({@link ClaimedTimer#suspect()},
 * {@code deaths}). One of them may be what killed that sweeper (a payload that exhausts the heap, a crash in
 * native code), and a death takes every timer its process holds with it, so they are bisected by death: a suspect
 * with one death fires in a group of at most 16, with two in a group of 4, from three on alone. Each group holds the
 * process on its own ({@link FireGate#alone}), so a death counts only against the group; a group of one is marked
 * as fired alone first ({@code held_alone}), and only a death of a timer so marked spends an attempt. The guilty
 * timer keeps dying alone and reaches {@code sweeper.max.attempts}, where it is dead-lettered without being
 * decompressed; an innocent one dies with it at most three times, spending nothing, and then fires. A pause past the
 * lease or a lost database counts the same way as a death: it narrows the group, and spends an attempt only during
 * the timer's own lone fire.
 *
 * <p>PRICE: after a death, the timers it held fire in small groups, one group per cycle of the process with the
 * other loops paused meanwhile: a claim of n timers held at a death costs about n/16 extra cycles. A timer that
 * kills its process is dead-lettered after 3 + sweeper.max.attempts deaths (8 by default), at most.
 */
final class SuspectPolicy {

    /** A claim split for delivery: fire {@code normal} as usual, then {@code group} alone; hand {@code later} back unspent. */
    record Split(List<ClaimedTimer> normal, List<ClaimedTimer> group, List<ClaimedTimer> later) {}

    private final int maxAttempts;

    SuspectPolicy(int maxAttempts) {
        this.maxAttempts = maxAttempts;
    }

    /** The group size for a suspect with {@code deaths} deaths. */
    static int groupSize(int deaths) {
        if (deaths >= 3) {
            return 1;
        }
        return deaths <= 1 ? 16 : 4;
    }

    /**
     * Suspects whose attempts are exhausted go with {@code normal}: Delivery dead-letters them without firing
     * (and without decompressing them). The first live suspect in claim order sets the group's level; the group
     * takes suspects of that level in claim order up to its size; every other live suspect waits for a later cycle.
     */
    Split split(List<ClaimedTimer> claimed) {
        List<ClaimedTimer> normal = new ArrayList<>(claimed.size());
        List<ClaimedTimer> group = new ArrayList<>();
        List<ClaimedTimer> later = new ArrayList<>();
        int level = -1;
        for (ClaimedTimer t : claimed) {
            if (!t.suspect() || t.history().attempts() >= maxAttempts) {
                normal.add(t);
            } else if (level < 0 || (Math.min(t.history().deaths(), 3) == level && group.size() < groupSize(level))) {
                level = Math.min(t.history().deaths(), 3);
                group.add(t);
            } else {
                later.add(t);
            }
        }
        return new Split(normal, group, later);
    }
}
