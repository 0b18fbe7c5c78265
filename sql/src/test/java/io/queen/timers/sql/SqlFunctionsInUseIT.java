package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.PostgresDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every function of the queen schema is there because something calls it
 * (docs/decisions.md#a-superseded-function-is-dropped-one-release-after-nothing-calls-it), and each is
 * defined once in the repository (docs/decisions.md#one-live-definition-of-every-function).
 *
 * <p>"Called" is what the main code of every module names (its .sql resources and .java sources, outside
 * the schema's own migrations), plus, transitively, what those functions and views name in their
 * bodies. A function nobody reaches that way must be on {@link #KEPT}, with its reason.
 */
class SqlFunctionsInUseIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    /** Kept although no code of this repository reaches them, each for the reason given. */
    static final Map<String, String> KEPT = Map.of(
            "timer_audit_wake_v1", "the outbox's insert trigger (timer_audit_outbox_wake) calls it: it wakes the"
                    + " active audit relay at the commit that wrote the outbox",
            "log_push_v1", "Queen's own push (one segment per transaction), with Queen's signature: a Queen broker or"
                    + " client sharing the database calls it, and where we were first ours stands in until Queen's boot"
                    + " replaces its body; the log module's tests push through it");

    private static final Pattern NAMED = Pattern.compile("\\bqueen\\.([a-z_0-9]+)\\b");
    private static final Pattern DEFINED = Pattern.compile(
            "(?i)\\bCREATE\\s+(?:OR\\s+REPLACE\\s+)?(?:FUNCTION|VIEW)\\s+queen\\.([a-z_0-9]+)");

    @Test
    void everyFunctionOfTheQueenSchemaIsCalledByTheCodeOrKeptForAStatedReason() throws Exception {
        Map<String, String> bodies = bodies();
        Set<String> reached = reachedFrom(namedByMainCode(), bodies);

        Set<String> unreached = new TreeSet<>(functions());
        unreached.removeAll(reached);
        unreached.removeAll(KEPT.keySet());
        assertThat(unreached)
                .as("functions of the queen schema that no code calls: retire them (from its R__ file, and once released"
                        + " by a versioned DROP one release after the last caller) or keep them on SqlFunctionsInUseIT.KEPT"
                        + " with the reason")
                .isEmpty();
        assertThat(functions()).as("a kept function that no longer exists").containsAll(KEPT.keySet());
    }

    @Test
    void everyFunctionAndViewIsDefinedOnceAndOnlyInDbCurrent() throws IOException {
        Path db = repositoryRoot().resolve("sql/src/main/resources/db");
        Map<String, Set<String>> definedIn = new TreeMap<>();
        try (Stream<Path> files = Files.walk(db)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".sql")).toList()) {
                Matcher m = DEFINED.matcher(withoutComments(Files.readString(f)));
                while (m.find()) {
                    definedIn.computeIfAbsent(m.group(1), k -> new TreeSet<>()).add(db.relativize(f).toString());
                }
            }
        }
        assertThat(definedIn).isNotEmpty();
        definedIn.forEach((name, where) -> assertThat(where).as(name).hasSize(1).allMatch(w -> w.startsWith("current/R__")));
    }

    /** Names of queen objects in main code: .sql resources and .java sources of every module, not the schema's own. */
    private static Set<String> namedByMainCode() throws IOException {
        Path root = repositoryRoot();
        Path schema = root.resolve("sql/src/main/resources/db");
        Set<String> out = new TreeSet<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path main : modules.map(m -> m.resolve("src/main")).filter(Files::isDirectory).toList()) {
                try (Stream<Path> files = Files.walk(main)) {
                    for (Path f : files.filter(p -> !p.startsWith(schema))
                            .filter(p -> p.toString().endsWith(".sql") || p.toString().endsWith(".java")).toList()) {
                        Matcher m = NAMED.matcher(Files.readString(f));
                        while (m.find()) {
                            out.add(m.group(1));
                        }
                    }
                }
            }
        }
        return out;
    }

    private static Set<String> reachedFrom(Set<String> roots, Map<String, String> bodies) {
        Set<String> reached = new TreeSet<>();
        Deque<String> todo = new ArrayDeque<>(roots);
        while (!todo.isEmpty()) {
            String name = todo.pop();
            if (!reached.add(name)) {
                continue;
            }
            Matcher m = NAMED.matcher(bodies.getOrDefault(name, ""));
            while (m.find()) {
                todo.push(m.group(1));
            }
        }
        return reached;
    }

    /** Function name (every overload's body, concatenated) or view name -> the text the catalog holds. */
    private static Map<String, String> bodies() throws SQLException {
        Map<String, String> out = new HashMap<>();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("""
                        SELECT p.proname, p.prosrc FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace
                        UNION ALL
                        SELECT v.relname, pg_get_viewdef(v.oid) FROM pg_class v
                         WHERE v.relnamespace = 'queen'::regnamespace AND v.relkind IN ('v', 'm')""")) {
            while (rs.next()) {
                out.merge(rs.getString(1), rs.getString(2), (a, b) -> a + "\n" + b);
            }
        }
        return out;
    }

    private static Set<String> functions() throws SQLException {
        Set<String> out = new TreeSet<>();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT proname FROM pg_proc WHERE pronamespace = 'queen'::regnamespace")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    private static String withoutComments(String sql) {
        return sql.replaceAll("--[^\n]*", "");
    }

    static Path repositoryRoot() {
        Path here = Path.of("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("sql/src/main/resources/db/migration"))) {
                return p;
            }
        }
        throw new IllegalStateException("no repository root above " + here);
    }
}
