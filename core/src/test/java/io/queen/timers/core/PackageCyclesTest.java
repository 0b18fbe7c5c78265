package io.queen.timers.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
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
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No package cycle in core, nor in the modules split from it (relay, inspect): each package does one job and uses
 * only jobs below it (docs/development.md#layout), so a reader can take one package without the rest. Read from the
 * sources, not the class files: javac inlines a constant ({@code CommonSettings.JDBC_URL}) and the bytecode keeps no
 * trace of the package it came from. An import, a static import and a qualified name in code count; comments and
 * string literals do not.
 */
class PackageCyclesTest {

    /** Core itself and the modules that were its packages; the test reads their sources in place, so order is free. */
    static final List<Path> ROOTS = List.of(Path.of("src/main/java"), Path.of("../relay/src/main/java"),
            Path.of("../inspect/src/main/java"));

    @Test
    void corePackagesAndTheModulesSplitFromCoreFormNoCycle() {
        Graph graph = Graph.of(sources(ROOTS));

        assertThat(graph.packages()).as("the packages read").contains("io.queen.timers.core.config", "io.queen.timers.core.db",
                "io.queen.timers.core.ops", "io.queen.timers.relay", "io.queen.timers.inspect");
        assertThat(graph.uses("io.queen.timers.core.ops")).as("what ops uses (the reader sees imports)").contains("io.queen.timers.core.db");
        assertThat(graph.cycles()).as("package cycles, each with the files that close it:%n%s", graph.describeCycles()).isEmpty();
    }

    @Test
    void aCycleThroughAnImportAStaticImportAndAQualifiedNameIsFound() {
        Map<String, String> sources = Map.of(
                "A.java", "package io.queen.timers.a;\n\nimport io.queen.timers.b.B;\n\nclass A {}\n",
                "B.java", "package io.queen.timers.b;\n\nimport static io.queen.timers.c.C.LIMIT;\n\nclass B {}\n",
                "C.java", "package io.queen.timers.c;\n\nclass C {\n    static final int LIMIT = io.queen.timers.a.A.class.hashCode();\n}\n",
                // neither a comment nor a string is a use: D stays out of the cycle
                "D.java", "package io.queen.timers.d;\n\n/** Like {@link io.queen.timers.a.A}. */\nclass D {\n"
                        + "    // io.queen.timers.a.A\n    String s = \"io.queen.timers.a.A\";\n    String t = \"\"\"\n        io.queen.timers.a.A\n        \"\"\";\n}\n",
                "E.java", "package io.queen.timers.a;\n\nimport io.queen.timers.d.D;\n\nclass E {}\n");

        Graph graph = Graph.of(sources);

        assertThat(graph.cycles()).containsExactly(List.of("io.queen.timers.a", "io.queen.timers.b", "io.queen.timers.c"));
        assertThat(graph.uses("io.queen.timers.d")).isEmpty();
        assertThat(graph.describeCycles()).contains("io.queen.timers.c -> io.queen.timers.a (C.java)");
    }

    /** Every {@code .java} file under the roots, by its path. */
    static Map<String, String> sources(List<Path> roots) {
        Map<String, String> sources = new TreeMap<>();
        for (Path root : roots) {
            assertThat(root).as("source root %s (run from the module directory)", root.toAbsolutePath().normalize()).isDirectory();
            try (Stream<Path> files = Files.walk(root)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    sources.put(root.relativize(f).toString(), Files.readString(f));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return sources;
    }

    /** Which package uses which, each use with the first file that makes it. */
    record Graph(Map<String, Map<String, String>> edges) {

        private static final Pattern PACKAGE = Pattern.compile("^\\s*package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
        /** A name of a type of this project: lower-case segments (the package), then an upper-case one (the type) or *. */
        private static final Pattern USE = Pattern.compile("\\bio\\.queen\\.timers((?:\\s*\\.\\s*[a-z_][a-z0-9_]*)+)\\s*\\.\\s*(?:[A-Z]|\\*)");

        static Graph of(Map<String, String> sources) {
            Map<String, Map<String, String>> edges = new TreeMap<>();
            sources.forEach((file, text) -> {
                String code = withoutCommentsAndStrings(text);
                Matcher p = PACKAGE.matcher(code);
                assertThat(p.find()).as("%s declares a package", file).isTrue();
                String from = p.group(1);
                Map<String, String> uses = edges.computeIfAbsent(from, k -> new TreeMap<>());
                Matcher m = USE.matcher(code);
                while (m.find()) {
                    String to = "io.queen.timers" + m.group(1).replaceAll("\\s", "");
                    if (!to.equals(from)) {
                        uses.putIfAbsent(to, Path.of(file).getFileName().toString());
                    }
                }
            });
            return new Graph(edges);
        }

        Set<String> packages() {
            return edges.keySet();
        }

        Set<String> uses(String pkg) {
            return edges.getOrDefault(pkg, Map.of()).keySet();
        }

        /** The strongly connected components of more than one package (Tarjan), each sorted, in order of their first. */
        List<List<String>> cycles() {
            Map<String, Integer> index = new HashMap<>();
            Map<String, Integer> low = new HashMap<>();
            Deque<String> stack = new ArrayDeque<>();
            Set<String> onStack = new HashSet<>();
            List<List<String>> found = new ArrayList<>();
            for (String p : edges.keySet()) {
                if (!index.containsKey(p)) {
                    connect(p, index, low, stack, onStack, found);
                }
            }
            found.sort((a, b) -> a.get(0).compareTo(b.get(0)));
            return found;
        }

        private void connect(String v, Map<String, Integer> index, Map<String, Integer> low, Deque<String> stack, Set<String> onStack,
                List<List<String>> found) {
            index.put(v, index.size());
            low.put(v, index.get(v));
            stack.push(v);
            onStack.add(v);
            for (String w : uses(v)) {
                if (!index.containsKey(w)) {
                    connect(w, index, low, stack, onStack, found);
                    low.put(v, Math.min(low.get(v), low.get(w)));
                } else if (onStack.contains(w)) {
                    low.put(v, Math.min(low.get(v), index.get(w)));
                }
            }
            if (low.get(v).equals(index.get(v))) {
                Set<String> component = new TreeSet<>();
                String w;
                do {
                    w = stack.pop();
                    onStack.remove(w);
                    component.add(w);
                } while (!w.equals(v));
                if (component.size() > 1) {
                    found.add(List.copyOf(component));
                }
            }
        }

        /** Each cycle's uses among its own packages, with the file that makes each: what to change to break it. */
        String describeCycles() {
            return cycles().stream().map(c -> c.stream()
                            .flatMap(from -> edges.get(from).entrySet().stream().filter(e -> c.contains(e.getKey()))
                                    .map(e -> "  " + from + " -> " + e.getKey() + " (" + e.getValue() + ")"))
                            .collect(Collectors.joining("\n", "cycle " + c + ":\n", "")))
                    .collect(Collectors.joining("\n"));
        }

        /** The code only: comments become a space, string and text-block literals become "" (a name inside one is no use). */
        static String withoutCommentsAndStrings(String s) {
            StringBuilder out = new StringBuilder(s.length());
            int i = 0;
            while (i < s.length()) {
                if (s.startsWith("//", i)) {
                    int newline = s.indexOf('\n', i);
                    i = newline < 0 ? s.length() : newline;   // the newline stays: the package pattern reads lines
                    out.append(' ');
                } else if (s.startsWith("/*", i)) {
                    i = end(s, "*/", i + 2);
                    out.append(' ');
                } else if (s.startsWith("\"\"\"", i)) {
                    i = end(s, "\"\"\"", i + 3);
                    out.append("\"\"");
                } else if (s.charAt(i) == '"' || s.charAt(i) == '\'') {
                    char quote = s.charAt(i++);
                    while (i < s.length() && s.charAt(i) != quote) {
                        i += s.charAt(i) == '\\' ? 2 : 1;
                    }
                    i++;
                    out.append(quote).append(quote);
                } else {
                    out.append(s.charAt(i++));
                }
            }
            return out.toString();
        }

        /** The index just past the next {@code close} at or after {@code from}, or the text's end. */
        private static int end(String s, String close, int from) {
            int at = s.indexOf(close, from);
            return at < 0 ? s.length() : at + close.length();
        }
    }
}
