package io.queen.timers.bridge.crypto;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Which destination queues get their payloads sealed at schedule time: every queue whose
 * {@code queen.queues.encryption_enabled} is true (read, never written: the schedule never writes
 * queen.queues), and every queue matching one of {@link EncryptionSettings#QUEUES}. The pattern side
 * exists because a queue is born at the fire: a timer scheduled for a queue that does not exist yet
 * has no row to read, so only a pattern can say it must be encrypted.
 */
public final class EncryptionPolicy {

    private final List<String> globs;
    private final List<Pattern> patterns;

    public EncryptionPolicy(List<String> globs) {
        this.globs = globs.stream().map(String::trim).filter(g -> !g.isEmpty()).toList();
        this.patterns = this.globs.stream().map(EncryptionPolicy::glob).toList();
    }

    public boolean hasPatterns() {
        return !patterns.isEmpty();
    }

    /** @param enabledInQueues the queue's queen.queues.encryption_enabled (false when the queue does not exist) */
    public boolean requires(String queue, boolean enabledInQueues) {
        return enabledInQueues || patterns.stream().anyMatch(p -> p.matcher(queue).matches());
    }

    /**
     * The same patterns as SQL LIKE patterns (default escape backslash), for the fire, which refuses clear
     * payloads for the queues they match (queen.bridge_sealed_queues): {@code *} becomes {@code %},
     * and LIKE's own {@code %}, {@code _} and backslash are escaped, so both sides match the same names.
     */
    public List<String> likePatterns() {
        return globs.stream().map(g -> {
            StringBuilder like = new StringBuilder();
            for (char ch : g.toCharArray()) {
                switch (ch) {
                    case '*' -> like.append('%');
                    case '%', '_', '\\' -> like.append('\\').append(ch);
                    default -> like.append(ch);
                }
            }
            return like.toString();
        }).toList();
    }

    private static Pattern glob(String g) {
        String[] parts = g.trim().split("\\*", -1);
        StringBuilder re = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            re.append(i == 0 ? "" : ".*").append(Pattern.quote(parts[i]));
        }
        return Pattern.compile(re.toString());
    }
}
