package io.queen.timers.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every JDBC read in the main sources of every module, but those {@link #REMAINING} lists, names its column
 * ({@code rs.getLong("next_offset")}), and the statement's select list names each column it returns ({@code AS name}
 * where it is an expression) (docs/development.md#names-not-positions): a read by position silently reads another column when a select list
 * gains, loses or reorders one, and a reader has to count to know what {@code getString(7)} is.
 *
 * <p>Checked on the text of {@code src/main/java} (comments and the contents of strings aside): a call
 * {@code x.getSomething(} whose first argument is a number, or a variable plus or minus one ({@code i + 1},
 * {@code col++}), on a variable declared as a {@link java.sql.ResultSet} or {@link java.sql.CallableStatement} (a field,
 * a parameter, a local, or {@code var x = ....executeQuery()}). The price of a text scan instead of a type check: a
 * result set reached without a variable of its own ({@code st.executeQuery().getLong(1)}) or an index held in a
 * variable of another name passes unseen.
 */
class ColumnsByNameTest {

    /** A variable that holds a result set (or the OUT parameters of a call) and its name. */
    static final Pattern RESULT_VARIABLE = Pattern.compile(
            "\\b(?:ResultSet|CallableStatement)\\s+([A-Za-z_$][A-Za-z0-9_$]*)\\s*[=;,)]"
                    + "|\\bvar\\s+([A-Za-z_$][A-Za-z0-9_$]*)\\s*=\\s*[^;]*\\.(?:executeQuery|getResultSet)\\(");

    /**
     * What still reads by position, file by file with how many reads: work left, not a reason. Everything that ships
     * (the modules of the BOM) reads by name; these are the rigs. The list may only shrink: a new read by
     * position, in a listed file or another, fails, and a file that reads fewer must be taken down here. The price of
     * counting per file: moving a read between two listed files keeps their sum and passes unseen.
     */
    static final Map<String, Integer> REMAINING = Remaining.of(
            "bench/src/main/java/io/queen/timers/bench/BenchPostgres.java", 1,
            "bench/src/main/java/io/queen/timers/bench/IngestBench.java", 1,
            "bench/src/main/java/io/queen/timers/bench/pipeline/Peers.java", 2,
            "bench/src/main/java/io/queen/timers/bench/pipeline/PgProfile.java", 27,
            "bench/src/main/java/io/queen/timers/bench/pipeline/PipelineBench.java", 4,
            "bench/src/main/java/io/queen/timers/bench/pipeline/SteadyReport.java", 5,
            "bench/src/main/java/io/queen/timers/bench/sweeper/BenchStack.java", 6,
            "faults/src/main/java/io/queen/timers/faults/FaultHarness.java", 4,
            "faults/src/main/java/io/queen/timers/faults/check/Checker.java", 22,
            "faults/src/main/java/io/queen/timers/faults/check/LogWatch.java", 5,
            "processes/src/main/java/io/queen/timers/processes/PostgresProcess.java", 1,
            "processes/src/main/java/io/queen/timers/processes/stack/Stack.java", 2,
            "soak/src/main/java/io/queen/timers/soak/SoakRig.java", 2,
            "soak/src/main/java/io/queen/timers/soak/sample/Lateness.java", 4,
            "soak/src/main/java/io/queen/timers/soak/sample/Sampler.java", 19,
            "testkit/src/main/java/io/queen/timers/testkit/Backends.java", 1);

    @Test
    void everyJdbcReadNamesItsColumn() throws IOException {
        Map<String, Integer> found = indexReadsByFile();
        Map<String, Integer> wrong = new TreeMap<>();
        found.forEach((file, n) -> {
            if (n > REMAINING.getOrDefault(file, 0)) {
                wrong.put(file, n);
            }
        });
        assertThat(wrong).as("JDBC reads by column position (file: how many); read each by its name, rs.getLong(\"next_offset\"),"
                + " with the statement naming the column (AS name where it is an expression); docs/development.md#names-not-positions")
                .isEmpty();
    }

    @Test
    void theRemainingListOnlyShrinks() throws IOException {
        Map<String, Integer> found = indexReadsByFile();
        Map<String, Integer> stale = new TreeMap<>();
        REMAINING.forEach((file, n) -> {
            if (found.getOrDefault(file, 0) < n) {
                stale.put(file, found.getOrDefault(file, 0));
            }
        });
        assertThat(stale).as("files that read fewer columns by position than REMAINING says (file: how many now);"
                + " lower or remove their entries").isEmpty();
    }

    /** Every main source file of every module that reads by position, and how many times. */
    static Map<String, Integer> indexReadsByFile() throws IOException {
        Path root = TestLanesTest.repository();
        Map<String, Integer> found = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> p.toString().replace('\\', '/').contains("/src/main/java/"))
                    .filter(p -> !p.toString().replace('\\', '/').contains("/target/"))
                    .forEach(p -> {
                        int n = indexReads(code(read(p)));
                        if (n > 0) {
                            found.put(root.relativize(p).toString().replace('\\', '/'), n);
                        }
                    });
        }
        return found;
    }

    @Test
    void theScanSeesAReadByPosition() {
        assertThat(indexReads(code("try (ResultSet rs = st.executeQuery()) { rs.next(); long n = rs.getLong(1); }"))).isEqualTo(1);
        assertThat(indexReads(code("void read(ResultSet row) { row.getObject(3, UUID.class); row.getString(i + 1); }"))).isEqualTo(2);
        assertThat(indexReads(code("try (var rs = st.executeQuery()) { rs.getTimestamp( 2 ).toInstant(); }"))).isEqualTo(1);
        assertThat(indexReads(code("void out(CallableStatement call) { call.getLong(col++); }"))).isEqualTo(1);
        // by name, on something else, or in a comment or a string: not a read by position
        assertThat(indexReads(code("try (ResultSet rs = st.executeQuery()) { rs.getLong(\"n\"); rs.getObject(\"id\", UUID.class); }"))).isZero();
        assertThat(indexReads(code("ByteBuffer b = ByteBuffer.wrap(key); b.getShort(2); list.get(0);"))).isZero();
        assertThat(indexReads(code("ResultSet rs = null; // rs.getLong(1)\n String s = \"rs.getLong(1)\"; /* rs.getInt(2) */"))).isZero();
    }

    /** How many reads by position on a result-set variable the code (comments and strings blanked) makes. */
    static int indexReads(String code) {
        Set<String> names = new TreeSet<>();
        Matcher v = RESULT_VARIABLE.matcher(code);
        while (v.find()) {
            names.add(v.group(1) != null ? v.group(1) : v.group(2));
        }
        int n = 0;
        for (String name : names) {
            Matcher m = Pattern.compile("\\b" + Pattern.quote(name)
                    + "\\s*\\.\\s*get[A-Z][A-Za-z]*\\(\\s*(?:\\d|[A-Za-z_$][A-Za-z0-9_$]*\\s*(?:\\+\\+|--|[+-]\\s*\\d))").matcher(code);
            while (m.find()) {
                n++;
            }
        }
        return n;
    }

    /** The source with the contents of comments, strings, text blocks and character literals blanked. */
    static String code(String source) {
        StringBuilder out = new StringBuilder(source.length());
        int i = 0;
        while (i < source.length()) {
            char c = source.charAt(i);
            if (source.startsWith("//", i)) {
                while (i < source.length() && source.charAt(i) != '\n') {
                    i++;
                }
            } else if (source.startsWith("/*", i)) {
                int end = source.indexOf("*/", i + 2);
                i = end < 0 ? source.length() : end + 2;
                out.append(' ');
            } else if (source.startsWith("\"\"\"", i)) {
                int end = source.indexOf("\"\"\"", i + 3);
                i = end < 0 ? source.length() : end + 3;
                out.append("\"\"");
            } else if (c == '"' || c == '\'') {
                i++;
                while (i < source.length() && source.charAt(i) != c) {
                    i += source.charAt(i) == '\\' ? 2 : 1;
                }
                i++;
                out.append(c).append(c);
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
