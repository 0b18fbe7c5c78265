package io.queen.timers.core.text;

/**
 * Text from outside (timer keys, txns, queue and partition names, record keys, error messages) made
 * safe to print on one line: to a log, where a CR or LF would forge a line, and to an operator's
 * terminal, where ESC starts a control sequence. Every C0 and C1 control character, DEL, the Unicode
 * line and paragraph separators, the bidirectional overrides (which reorder what a reader sees) and
 * unpaired surrogates are written as a Java-style escape ({@code \n}, {@code \r}, {@code \t},
 * {@code \u001b}); everything else is kept as it is. The one escaper of the project: logs and the CLI
 * both use it.
 */
public final class Printable {

    private Printable() {}

    /** {@code s} with every unsafe character escaped; {@code null} prints as {@code null}. */
    public static String line(String s) {
        if (s == null) {
            return "null";
        }
        int i = 0;
        while (i < s.length() && safe(s, i)) {
            i += Character.isHighSurrogate(s.charAt(i)) ? 2 : 1;
        }
        if (i >= s.length()) {
            return s;
        }
        StringBuilder b = new StringBuilder(s.length() + 16).append(s, 0, i);
        while (i < s.length()) {
            char ch = s.charAt(i);
            if (safe(s, i)) {
                int n = Character.isHighSurrogate(ch) ? 2 : 1;
                b.append(s, i, i + n);
                i += n;
                continue;
            }
            switch (ch) {
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> b.append(String.format("\\u%04x", (int) ch));
            }
            i++;
        }
        return b.toString();
    }

    /** Whether the character (or surrogate pair) at {@code i} may be printed as it is. */
    private static boolean safe(String s, int i) {
        char ch = s.charAt(i);
        if (Character.isHighSurrogate(ch)) {
            return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        }
        if (Character.isLowSurrogate(ch) || Character.isISOControl(ch)) {
            return false;
        }
        return !(ch == '\u2028' || ch == '\u2029' || (ch >= '\u202a' && ch <= '\u202e') || (ch >= '\u2066' && ch <= '\u2069')
                || ch == '\u200e' || ch == '\u200f' || ch == '\u061c');
    }
}
