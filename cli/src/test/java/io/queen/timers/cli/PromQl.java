package io.queen.timers.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The series selectors of a PromQL expression (metric name and label matchers), read by a small lexer:
 * what a dashboard panel or an alert rule needs a process to export. Function and aggregation names,
 * keywords, grouping label lists ({@code by (le)}), ranges ({@code [5m]}, {@code [$__rate_interval]}),
 * numbers, durations and strings are not selectors. The grammar itself is Prometheus's to check
 * ({@code promtool check rules} in {@code .ci/run}); what this refuses is what it cannot read, so a
 * query it does not understand fails loudly instead of passing unchecked.
 */
final class PromQl {

    /** One label matcher: {@code name op "value"}, op one of {@code = != =~ !~}. */
    record Matcher(String label, String op, String value) {}

    /** One selector: a metric name and its matchers. */
    record Selector(String metric, List<Matcher> matchers) {}

    private static final Set<String> AGGREGATIONS = Set.of("sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
            "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio");
    private static final Set<String> GROUPING = Set.of("by", "without", "on", "ignoring", "group_left", "group_right");
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "atan2", "inf", "nan");

    private final String expr;
    private int pos;

    private PromQl(String expr) {
        this.expr = expr;
    }

    static List<Selector> selectors(String expr) {
        return new PromQl(expr).read();
    }

    private List<Selector> read() {
        List<Selector> out = new ArrayList<>();
        int depth = 0;
        while (pos < expr.length()) {
            char c = expr.charAt(pos);
            if (Character.isWhitespace(c)) {
                pos++;
            } else if (c == '"' || c == '\'' || c == '`') {
                string();
            } else if (c == '[') {
                int end = expr.indexOf(']', pos);
                if (end < 0) {
                    throw fail("unclosed [");
                }
                pos = end + 1;
            } else if (c == '{') {
                throw fail("a selector without a metric name");
            } else if (c == '$') {
                pos++;
                identifier();   // a Grafana variable outside a range: not a selector
            } else if (Character.isDigit(c) || c == '.') {
                while (pos < expr.length() && (Character.isLetterOrDigit(expr.charAt(pos)) || expr.charAt(pos) == '.')) {
                    pos++;   // a number or a duration (0.99, 1e3, 5m)
                }
            } else if (Character.isLetter(c) || c == '_' || c == ':') {
                String name = identifier();
                char next = nextNonSpace();
                if (GROUPING.contains(name)) {
                    if (next == '(') {
                        skipParenthesised();   // a list of label names
                    }
                } else if (KEYWORDS.contains(name)) {
                    // an operator
                } else if (next == '(' || AGGREGATIONS.contains(name)) {
                    // a function or an aggregation; its arguments follow
                } else {
                    List<Matcher> matchers = next == '{' ? matchers() : List.of();
                    out.add(new Selector(name, matchers));
                }
            } else {
                if (c == '(') {
                    depth++;
                } else if (c == ')' && --depth < 0) {
                    throw fail("unbalanced )");
                }
                pos++;
            }
        }
        if (depth != 0) {
            throw fail("unbalanced (");
        }
        return out;
    }

    private List<Matcher> matchers() {
        List<Matcher> out = new ArrayList<>();
        skipSpace();
        pos++;   // {
        while (true) {
            skipSpace();
            if (pos >= expr.length()) {
                throw fail("unclosed {");
            }
            if (expr.charAt(pos) == '}') {
                pos++;
                return out;
            }
            if (expr.charAt(pos) == ',') {
                pos++;
                continue;
            }
            String label = identifier();
            skipSpace();
            String op = expr.startsWith("=~", pos) ? "=~" : expr.startsWith("!~", pos) ? "!~" : expr.startsWith("!=", pos) ? "!="
                    : expr.startsWith("=", pos) ? "=" : null;
            if (label.isEmpty() || op == null) {
                throw fail("a label matcher");
            }
            pos += op.length();
            skipSpace();
            out.add(new Matcher(label, op, string()));
        }
    }

    private String string() {
        char quote = expr.charAt(pos);
        if (quote != '"' && quote != '\'' && quote != '`') {
            throw fail("a quoted string");
        }
        StringBuilder b = new StringBuilder();
        pos++;
        while (pos < expr.length() && expr.charAt(pos) != quote) {
            if (expr.charAt(pos) == '\\' && quote != '`' && pos + 1 < expr.length()) {
                pos++;
            }
            b.append(expr.charAt(pos++));
        }
        if (pos >= expr.length()) {
            throw fail("unclosed string");
        }
        pos++;
        return b.toString();
    }

    private String identifier() {
        int start = pos;
        while (pos < expr.length() && (Character.isLetterOrDigit(expr.charAt(pos)) || expr.charAt(pos) == '_' || expr.charAt(pos) == ':')) {
            pos++;
        }
        return expr.substring(start, pos);
    }

    private void skipParenthesised() {
        skipSpace();
        int end = expr.indexOf(')', pos);
        if (end < 0) {
            throw fail("unclosed (");
        }
        pos = end + 1;
    }

    private char nextNonSpace() {
        skipSpace();
        return pos < expr.length() ? expr.charAt(pos) : 0;
    }

    private void skipSpace() {
        while (pos < expr.length() && Character.isWhitespace(expr.charAt(pos))) {
            pos++;
        }
    }

    private IllegalArgumentException fail(String what) {
        return new IllegalArgumentException("cannot read PromQL at " + pos + " (" + what + "): " + expr);
    }
}
