package io.queen.timers.cli;

import io.queen.timers.core.text.Printable;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code --json}: one JSON object per line for scripts; otherwise one line for people. Every
 * command prints through this, so the two forms carry the same facts.
 */
public final class Output {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--json", description = "One JSON object per line (for scripts) instead of text for people.")
    boolean json;

    /**
     * Prints {@code fields} as a JSON line, or {@code human} as text. The human text escapes the values
     * that come from producers where it builds them (Printable); the JSON line is escaped here, which
     * keeps it valid JSON with the same value (Jackson leaves DEL, C1 controls and bidi overrides raw).
     */
    public void print(PrintWriter out, String human, Map<String, ?> fields) {
        out.println(json ? Printable.line(toJson(fields)) : human);
        out.flush();
    }

    public boolean json() {
        return json;
    }

    public static String toJson(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static ObjectMapper mapper() {
        return JSON;
    }
}
