package io.queen.timers.faults.check;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the checks found: a count per violation kind, with the first few examples of each (enough to
 * reproduce: record coordinates, message ids, timers), and plain facts (counts that are not violations).
 */
public final class Findings {

    private static final int EXAMPLES = 5;

    private final Map<String, Long> violations = new LinkedHashMap<>();
    private final Map<String, List<String>> examples = new LinkedHashMap<>();
    private final Map<String, Object> facts = new LinkedHashMap<>();

    /** Declares a violation kind with zero, so the table shows it even when nothing was found. */
    public void declare(String kind) {
        violations.putIfAbsent(kind, 0L);
    }

    public synchronized void violation(String kind, String example) {
        violations.merge(kind, 1L, Long::sum);
        List<String> ex = examples.computeIfAbsent(kind, k -> new ArrayList<>());
        if (ex.size() < EXAMPLES) {
            ex.add(example);
        }
    }

    public void fact(String name, Object value) {
        facts.put(name, value);
    }

    public long count(String kind) {
        return violations.getOrDefault(kind, 0L);
    }

    public Map<String, Long> violations() {
        return violations;
    }

    public Map<String, List<String>> examples() {
        return examples;
    }

    public Map<String, Object> facts() {
        return facts;
    }

    public boolean clean() {
        return violations.values().stream().allMatch(v -> v == 0);
    }
}
