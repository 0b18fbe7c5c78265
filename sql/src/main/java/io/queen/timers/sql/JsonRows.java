package io.queen.timers.sql;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.List;

/**
 * Writes the rows a stored function takes as one {@code jsonb} parameter
 * (docs/decisions.md#rows-not-parallel-arrays): a JSON array with one object per row, one key per field,
 * named in snake_case after the record component (so {@code timerKey} is {@code "timer_key"}, the column
 * it fills). Every field is written, null included:
 * the function checks that every row names every field ({@code queen.json_rows_v1}), so a field left out
 * fails loudly instead of reading as NULL. {@code byte[]} is base64 (decoded by the function), a
 * {@link java.util.UUID} its text form, a Jackson node embedded as it is.
 *
 * <p>Bound as text against a {@code ?::jsonb} placeholder, one parameter per kind of row, so a call
 * reads as its named fields and not as a count of positional arrays
 * (docs/decisions.md#rows-not-parallel-arrays).
 */
public final class JsonRows {

    private static final ObjectMapper JSON = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .serializationInclusion(JsonInclude.Include.ALWAYS)
            .build();

    private JsonRows() {}

    /** The rows as a JSON array; each element a record whose components are the row's fields. */
    public static String write(List<? extends Record> rows) {
        try {
            return JSON.writeValueAsString(rows);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write " + rows.size() + " rows as JSON", e);
        }
    }
}
