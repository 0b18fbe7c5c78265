package io.queen.timers.client.audit;

/**
 * Why a recurring series ended with an occurrence: the {@code ended} field of its {@code fired}, {@code dead_lettered} or
 * {@code skipped} event (docs/recurring.md#events). Its {@code next} is then null and nothing more of the series fires.
 */
public enum SeriesEnd {
    /** It was the rule's maxOccurrences-th. */
    MAX_OCCURRENCES("max_occurrences"),
    /** The rule's next occurrence would be after its endAt. */
    END_AT("end_at"),
    /** The rule has no later occurrence at all. */
    NO_OCCURRENCE("no_occurrence"),
    /** The stored rule could not be read or stepped (a row edited by hand): this occurrence was its last. */
    RULE_UNREADABLE("rule_unreadable"),
    /** A cancel met this occurrence in a sweeper's hands ({@code too_late}): it went out and the series stopped with it. */
    CANCELLED("cancelled"),
    /** It was the recurring.max.consecutive.dead.letters-th dead letter in a row. */
    DEAD_LETTERS("dead_letters"),
    /** Its queue requires encryption and no key sealed it: every later occurrence would be refused too. */
    ENCRYPTION_REQUIRED("encryption_required"),
    /** A reason a later version added (the audit schema grows additively): the series ended, for a reason this version cannot name. */
    OTHER(null);

    private final String wireName;

    SeriesEnd(String wireName) {
        this.wireName = wireName;
    }

    /** The value on the wire; null for {@link #OTHER}. */
    public String wireName() {
        return wireName;
    }

    /** The reason a value names; {@link #OTHER} for one this version does not know (never a reason to drop the event). */
    public static SeriesEnd fromWire(String name) {
        for (SeriesEnd e : values()) {
            if (e.wireName != null && e.wireName.equals(name)) {
                return e;
            }
        }
        return OTHER;
    }
}
