package io.queen.timers.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The two test lanes (docs/development.md "Test lanes"): {@code mvn test} (surefire) runs the classes that
 * start no database and no broker; a class that starts PostgreSQL or Kafka is named {@code *IT} and runs under
 * failsafe ({@code mvn verify}). Checked on the text of every module's test sources, so a server-starting test
 * cannot slip into the fast lane, nor a plain one into the slow lane, without this failing.
 *
 * <p>A class starts a server when its code (comments and the contents of strings aside) names one of
 * {@link #STARTERS}, runs the local stack ({@code "local", "--temp"}), or names another test-source class that
 * starts one (a base class, a helper such as BridgeTestSupport, another test's static method). The price of a
 * text scan instead of a class graph: a new way to start a server that names none of these passes unseen
 * (add it to STARTERS), and naming a helper that happens to live in a server-starting class counts as starting.
 */
class TestLanesTest {

    /** What starts PostgreSQL or Kafka in a test: the testkit's starters and the servers under them. */
    static final List<String> STARTERS = List.of(
            "TestPostgres", "PostgresDatabase", "FreshDatabase",      // testkit: the JVM's PostgreSQL, a database on it
            "TestKafka", "AuditTopicReader",                          // testkit: the JVM's broker, a reader on it
            "EmbeddedPostgresServer", "EmbeddedKafkaBroker",          // embedded: the servers themselves
            "PostgresProcess", "BrokerMain",                          // processes: the fault harness's servers
            "LocalCommand",                                           // local: `local`'s stack, both servers in one JVM
            "SharedPostgres", "SharedKafka",                          // embedded: the JVM's shared servers
            "PerClass",                                               // testkit: a test stack per class
            "QueenTimersExtension", "QueenTimersStack");              // test: the adopters' kit, the whole stack per class

    /** The local stack run from a test, in this JVM or a child one: `queen-timers local --temp ...`. */
    static final Pattern RUNS_LOCAL_STACK = Pattern.compile("\"local\"\\s*,\\s*\"--temp\"");

    /** Surefire's default includes (the parent pom keeps them): what {@code mvn test} runs. */
    static boolean unitLaneRuns(String simpleName) {
        return !simpleName.endsWith("IT") && (simpleName.startsWith("Test") || simpleName.endsWith("Test")
                || simpleName.endsWith("Tests") || simpleName.endsWith("TestCase"));
    }

    @Test
    void noClassTheUnitLaneRunsStartsADatabaseOrABroker() {
        Map<String, String> why = Scan.of(repository()).startersByClass();
        Map<String, String> wrong = new TreeMap<>();
        why.forEach((name, reason) -> {
            if (unitLaneRuns(name)) {
                wrong.put(name, reason);
            }
        });
        assertThat(wrong).as("these start PostgreSQL or Kafka, so they belong to the integration lane: rename each "
                + "to *IT (git mv, same package; docs/development.md \"Test lanes\")").isEmpty();
    }

    @Test
    void everyIntegrationTestStartsADatabaseOrABroker() {
        Scan scan = Scan.of(repository());
        Set<String> its = new TreeSet<>();
        for (String name : scan.files.keySet()) {
            if (name.endsWith("IT")) {
                its.add(name);
            }
        }
        assertThat(its).as("integration tests found").isNotEmpty();
        Set<String> plain = new TreeSet<>(its);
        plain.removeAll(scan.startersByClass().keySet());
        assertThat(plain).as("these *IT classes start neither PostgreSQL nor Kafka: they belong to the unit lane "
                + "(name them *Test)").isEmpty();
        assertThat(its.stream().filter(n -> n.startsWith("Test")).toList())
                .as("an *IT named Test* would run in both lanes (surefire includes Test*)").isEmpty();
    }

    @Test
    void theStartersItLooksForStillExist() {
        Path root = repository();
        Set<String> mainClasses = new HashSet<>();
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/")
                    && !p.toString().contains("/target/")).forEach(p -> mainClasses.add(simpleName(p)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // a renamed starter would silently disarm the scan
        assertThat(mainClasses).containsAll(STARTERS);
    }

    @Test
    void theScanFollowsHelpersAndIgnoresComments() {
        Map<String, String> sources = Map.of(
                "SupportHelper", "class SupportHelper { static final PostgresDatabase db = null; }",
                "ViaHelperTest", "class ViaHelperTest { void t() { SupportHelper.db.dataSource(); } }",
                "CommentOnlyTest", "/** unlike TestKafka users */ class CommentOnlyTest { // TestPostgres\n String s = \"TestKafka\"; }",
                "LocalTest", "class LocalTest { void t() { run(\"local\", \"--temp\"); } }",
                "PlainTest", "class PlainTest { char c = '\"'; String t = \"\\\" TestKafka\"; int TestKafkaCount; }");
        Map<String, String> why = Scan.of(sources).startersByClass();
        assertThat(why.keySet()).containsExactlyInAnyOrder("SupportHelper", "ViaHelperTest", "LocalTest");
        assertThat(why.get("ViaHelperTest")).contains("SupportHelper");
    }

    /** The repository's root: the first directory up from this module that holds testkit/ and a pom. */
    static Path repository() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.isDirectory(dir.resolve("testkit")) && Files.exists(dir.resolve("pom.xml")))) {
            dir = dir.getParent();
        }
        assertThat(dir).as("repository root above " + Path.of("").toAbsolutePath()).isNotNull();
        return dir;
    }

    static String simpleName(Path p) {
        String f = p.getFileName().toString();
        return f.substring(0, f.length() - ".java".length());
    }

    /** Every test-source class of the repository by simple name, with its code as text. */
    static final class Scan {
        private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*");
        final Map<String, String> files;          // simple name -> source (a name in two modules: both, joined)

        private Scan(Map<String, String> files) {
            this.files = files;
        }

        static Scan of(Path root) {
            Map<String, String> files = new HashMap<>();
            try (Stream<Path> s = Files.walk(root)) {
                for (Path p : (Iterable<Path>) s::iterator) {
                    String text = p.toString();
                    if (text.endsWith(".java") && text.contains("/src/test/java/") && !text.contains("/target/")) {
                        files.merge(simpleName(p), Files.readString(p, StandardCharsets.UTF_8), (a, b) -> a + "\n" + b);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            assertThat(files).as("test sources under " + root).hasSizeGreaterThan(50);
            return new Scan(files);
        }

        static Scan of(Map<String, String> sources) {
            return new Scan(sources);
        }

        /** Each class that starts a server, with what makes it one (a starter, or the chain through helpers). */
        Map<String, String> startersByClass() {
            Map<String, String> why = new HashMap<>();
            Map<String, Set<String>> namedBy = new HashMap<>();    // class -> test-source classes naming it
            for (Map.Entry<String, String> f : files.entrySet()) {
                String name = f.getKey();
                String withStrings = code(f.getValue(), true);
                Set<String> identifiers = new HashSet<>();
                Matcher m = IDENTIFIER.matcher(code(f.getValue(), false));
                while (m.find()) {
                    identifiers.add(m.group());
                }
                Set<String> direct = new TreeSet<>(identifiers);
                direct.retainAll(STARTERS);
                if (RUNS_LOCAL_STACK.matcher(withStrings).find()) {
                    direct.add("the local stack");
                }
                if (!direct.isEmpty()) {
                    why.put(name, String.join(", ", direct));
                }
                for (String id : identifiers) {
                    if (files.containsKey(id) && !id.equals(name)) {
                        namedBy.computeIfAbsent(id, k -> new HashSet<>()).add(name);
                    }
                }
            }
            Deque<String> todo = new ArrayDeque<>(why.keySet());
            while (!todo.isEmpty()) {
                String starter = todo.pop();
                for (String user : namedBy.getOrDefault(starter, Set.of())) {
                    if (!why.containsKey(user)) {
                        why.put(user, "via " + starter + " (" + why.get(starter) + ")");
                        todo.push(user);
                    }
                }
            }
            return why;
        }

        /** The source without comments; string and char literals emptied unless {@code keepStrings}. */
        static String code(String src, boolean keepStrings) {
            StringBuilder out = new StringBuilder(src.length());
            int i = 0;
            int n = src.length();
            while (i < n) {
                char c = src.charAt(i);
                if (c == '/' && i + 1 < n && src.charAt(i + 1) == '/') {
                    while (i < n && src.charAt(i) != '\n') {
                        i++;
                    }
                } else if (c == '/' && i + 1 < n && src.charAt(i + 1) == '*') {
                    int end = src.indexOf("*/", i + 2);
                    i = end < 0 ? n : end + 2;
                    out.append(' ');
                } else if (src.startsWith("\"\"\"", i)) {
                    int end = i + 3;
                    while (end < n && !(src.startsWith("\"\"\"", end) && src.charAt(end - 1) != '\\')) {
                        end++;
                    }
                    end = Math.min(n, end + 3);
                    out.append(keepStrings ? src.substring(i, end) : "\"\"");
                    i = end;
                } else if (c == '"' || c == '\'') {
                    int end = i + 1;
                    while (end < n && src.charAt(end) != c && src.charAt(end) != '\n') {
                        end += src.charAt(end) == '\\' ? 2 : 1;
                    }
                    end = Math.min(n, end + 1);
                    out.append(keepStrings ? src.substring(i, end) : String.valueOf(c) + c);
                    i = end;
                } else {
                    out.append(c);
                    i++;
                }
            }
            return out.toString();
        }
    }
}
