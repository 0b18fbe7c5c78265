package io.queen.timers.testkit;

import java.util.Map;
import java.util.TreeMap;

/** A guard's list of what remains to convert: each name followed by its count, a list that may only shrink. */
final class Remaining {

    private Remaining() {
    }

    static Map<String, Integer> of(Object... nameThenCount) {
        Map<String, Integer> out = new TreeMap<>();
        for (int i = 0; i < nameThenCount.length; i += 2) {
            out.put((String) nameThenCount[i], (Integer) nameThenCount[i + 1]);
        }
        return Map.copyOf(out);
    }
}
