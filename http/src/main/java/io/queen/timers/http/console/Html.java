package io.queen.timers.http.console;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * The console's HTML: every value that reaches a page goes through {@link #text} (element text and quoted attribute
 * values alike) or {@link #url} (a query parameter), never around them. A timer key, a payload, a queue name and an
 * error message are the producers' input: hostile until escaped.
 */
final class Html {

    private Html() {}

    /** {@code s} safe inside element text and inside a double- or single-quoted attribute value; null is empty. */
    static String text(Object s) {
        if (s == null) {
            return "";
        }
        String v = s.toString();
        StringBuilder out = new StringBuilder(v.length() + 16);
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            switch (c) {
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '&' -> out.append("&amp;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    /** {@code s} as one query parameter's value (then {@link #text} for the attribute it sits in). */
    static String url(String s) {
        return URLEncoder.encode(s == null ? "" : s, StandardCharsets.UTF_8);
    }

    /** A whole page: the title escaped, {@code body} already HTML. A little inline CSS; no script at all. */
    static String page(String title, String nav, String body) {
        return "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + text(title) + " · queen-timers console</title>"
                + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><style>" + CSS + "</style></head><body>"
                + "<header><a href=\"/console\"><b>queen-timers</b> console</a>" + nav + "</header><main><h1>" + text(title) + "</h1>"
                + body + "</main></body></html>";
    }

    private static final String CSS = "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}"
            + "header{background:#1d2330;color:#fff;padding:.6em 1.2em;display:flex;gap:1.2em;align-items:center}"
            + "header a{color:#fff;text-decoration:none}main{padding:1em 1.5em}h1{font-size:1.3em;margin:.2em 0 .8em}"
            + "table{border-collapse:collapse;background:#fff;margin:.5em 0 1.2em}th,td{border:1px solid #d8dce3;padding:.3em .6em;"
            + "text-align:left;vertical-align:top}th{background:#eef0f4}code,pre{font:12px/1.4 ui-monospace,monospace}"
            + "pre{background:#fff;border:1px solid #d8dce3;padding:.6em;max-width:60em;overflow:auto;white-space:pre-wrap}"
            + ".ok{color:#17713a;font-weight:600}.bad{color:#b42318;font-weight:600}.note{color:#596275}"
            + "form.inline{display:inline}input[type=text]{padding:.2em}button{padding:.2em .7em;cursor:pointer}"
            + ".msg{background:#fff;border-left:4px solid #1d2330;padding:.5em .8em;margin:0 0 1em}";
}
