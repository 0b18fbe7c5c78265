package io.queen.timers.sweeper.loop;

import io.queen.timers.sweeper.claim.ClaimedTimer;
import java.util.ArrayList;
import java.util.List;

/**
 * How a claim's suspects are fired: timers whose previous lease ran out in a sweeper's hands
 * ({@link ClaimedTimer#abandoned()}; the claim spent an attempt on each, V120). One of them may be what
 * killed that sweeper (a payload that exhausts the heap, a crash in native code), and a death takes every
 * timer its process holds with it, so they are bisected by death: a suspect that died at attempt 1 fires in a
 * group of at most 16, at attempt 2 in a group of 4, from attempt 3 on alone; each group holds the process
 * on its own ({@link FireGate#alone}), so a death counts only against the group. The guilty timer keeps
 * dying and reaches {@code sweeper.max.attempts}, where it is dead-lettered without being decompressed;
 * an innocent one dies with it at most three times (at 16, 4, then never again once alone), so with
 * max.attempts >= 4 (default 5) only the guilty one is dead-lettered. With fewer attempts there is no room
 * to bisect: every suspect fires alone.
 *
 * <p>PRICE: after a death, the timers it held fire in small groups, one group per cycle of the process
 * with the other loops paused meanwhile: a claim of n timers held at a death costs about n/16 extra cycles.
 */
final class SuspectPolicy {

    /** A claim split for delivery: fire {@code normal} as usual, then {@code group} alone; hand {@code later} back unspent. */
    record Split(List<ClaimedTimer> normal, List<ClaimedTimer> group, List<ClaimedTimer> later) {}

    private final int maxAttempts;

    SuspectPolicy(int maxAttempts) {
        this.maxAttempts = maxAttempts;
    }

    /** The group size for a suspect whose attempts (deaths and failures) stand at {@code attempts}. */
    int groupSize(int attempts) {
        if (maxAttempts < 4 || attempts >= 3) {
            return 1;
        }
        return attempts <= 1 ? 16 : 4;
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
            if (!t.abandoned() || t.attempts() >= maxAttempts) {
                normal.add(t);
            } else if (level < 0 || (t.attempts() == level && group.size() < groupSize(level))) {
                level = t.attempts();
                group.add(t);
            } else {
                later.add(t);
            }
        }
        return new Split(normal, group, later);
    }
}
