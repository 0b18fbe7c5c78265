package io.queen.timers.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.TreeScanner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.lang.model.element.Modifier;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * No record, constructor or method of what ships (the modules of the BOM) takes more than {@link #MOST} parameters,
 * but those {@link #REMAINING} lists (docs/development.md#names-not-positions): settings and collaborators come as records grouped by concern or through
 * a builder, so a call reads by name ({@code settings.claim().lease()}), not by counting positions where two
 * {@code Duration}s or two {@code int}s can swap unseen.
 *
 * <p>Read with javac's parser ({@code JavacTask.parse}, no symbols resolved): a record's components, each constructor
 * (a record's compact one is its header) and each method. The rigs (benchmarks, harnesses, test kits) are not scanned:
 * what they take is not an interface anyone else programs against.
 */
class ParameterListsTest {

    /** The most parameters a declaration may take: past seven, a call is read by counting. */
    static final int MOST = 7;

    /**
     * What still takes more than {@link #MOST}, declaration by declaration with its count: work left, not a reason. The
     * settings of the bridge, the sweeper, core and the relay, a claimed timer and a route's token rules are grouped
     * already; these are the audit events' and the operator's read model's records (field for field their JSON), the
     * apply's upsert row, the HTTP API's server, a fetch's answer for one partition
     * (Kafka's fields) and the command source's constructor that takes a clock.
     * The list may only shrink: a new long declaration, or a listed one that grows, fails, and one that is gone or
     * shorter must be taken down here. The price of keying by name: a second constructor of a listed type, no longer than
     * the first, passes unseen.
     */
    static final Map<String, Integer> REMAINING = Remaining.of(
            "method DeadLetters.remove", 8,
            "new ApiServer", 10,
            "new CommandSource", 8,
            "new AuditEvent.DeadLettered", 9,
            "new AuditEvent.Fired", 10,
            "record AuditEvent.DeadLetterRemoved", 15,
            "record AuditEvent.DeadLettered", 10,
            "record AuditEvent.Fired", 11,
            "record AuditEvent.Meta", 9,
            "record AuditEvent.OffsetMoved", 10,
            "record AuditEvent.Rescheduled", 9,
            "record AuditEvent.Retrying", 9,
            "record AuditEvent.Scheduled", 9,
            "record AuditEvent.Skipped", 8,
            "record BatchApplier.UpsertRow", 16,
            "record DeadLetters.Letter", 11,
            "record Fetcher.Result", 8,
            "record TimerSummary", 17,
            "record TimerView", 20);

    @Test
    void nothingThatShipsTakesALongParameterList() throws IOException {
        Map<String, Integer> wrong = new TreeMap<>();
        longDeclarations().forEach((d, n) -> {
            if (n > REMAINING.getOrDefault(d, MOST)) {
                wrong.put(d, n);
            }
        });
        assertThat(wrong).as("declarations with more than " + MOST + " parameters (declaration: how many); group them into"
                + " records by concern or build them through a builder (docs/development.md#names-not-positions)").isEmpty();
    }

    @Test
    void theRemainingListOnlyShrinks() throws IOException {
        Map<String, Integer> found = longDeclarations();
        Map<String, Integer> stale = new TreeMap<>();
        REMAINING.forEach((d, n) -> {
            if (found.getOrDefault(d, 0) < n) {
                stale.put(d, found.getOrDefault(d, 0));
            }
        });
        assertThat(stale).as("listed long parameter lists that are gone or shorter (declaration: how many now, 0 when within "
                + MOST + "); lower or remove their entries").isEmpty();
    }

    /** Each declaration of what ships that takes more than {@link #MOST}, with the most any of that name takes. */
    static Map<String, Integer> longDeclarations() throws IOException {
        Map<String, Integer> out = new TreeMap<>();
        for (Declaration d : declarations(shippedSources())) {
            if (d.parameters > MOST) {
                out.merge(d.toString(), d.parameters, Math::max);
            }
        }
        return out;
    }

    @Test
    void theParserSeesEachKindOfDeclaration() throws IOException {
        Path dir = Files.createTempDirectory("parameter-lists");
        Path file = dir.resolve("Sample.java");
        Files.writeString(file, """
                package p;
                record Sample(int a, int b, int c, int d, int e, int f, int g, int h) {
                    Sample { }
                    Sample(int a) { this(a, a, a, a, a, a, a, a); }
                    static Sample of(int a, int b, int c, int d, int e, int f, int g, int h) { return null; }
                    static final class Loop {
                        Loop(int a, int b, int c, int d, int e, int f, int g) { }
                        void run(int a, int b, int c, int d, int e, int f, int g, int h, int i) { }
                    }
                }
                """, StandardCharsets.UTF_8);
        Map<String, Integer> found = declarations(List.of(file)).stream()
                .filter(d -> d.parameters > MOST).collect(Collectors.toMap(Declaration::toString, d -> d.parameters));
        assertThat(found).containsOnly(Map.entry("record Sample", 8), Map.entry("method Sample.of", 8),
                Map.entry("method Sample.Loop.run", 9));
    }

    /** One record header, constructor or method and how many parameters it takes. */
    record Declaration(String kind, String type, String name, int parameters) {
        @Override
        public String toString() {
            return kind + " " + type + (name.isEmpty() ? "" : "." + name);
        }
    }

    static List<Declaration> declarations(List<Path> sources) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<Declaration> out = new ArrayList<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            Iterable<? extends JavaFileObject> units = files.getJavaFileObjectsFromPaths(sources);
            JavacTask task = (JavacTask) javac.getTask(null, files, d -> { }, List.of("-proc:none"), null, units);
            for (CompilationUnitTree unit : task.parse()) {
                new TreeScanner<Void, Void>() {
                    private final Deque<String> types = new ArrayDeque<>();
                    private final Deque<ClassTree> classes = new ArrayDeque<>();

                    @Override
                    public Void visitClass(ClassTree c, Void unused) {
                        types.addLast(c.getSimpleName().toString());
                        classes.push(c);
                        if (c.getKind() == Tree.Kind.RECORD) {
                            out.add(new Declaration("record", type(), "", components(c).size()));
                        }
                        super.visitClass(c, unused);
                        classes.pop();
                        types.removeLast();
                        return null;
                    }

                    @Override
                    public Void visitMethod(MethodTree m, Void unused) {
                        boolean constructor = m.getName().contentEquals("<init>");
                        List<String> names = m.getParameters().stream().map(p -> p.getName().toString()).toList();
                        ClassTree c = classes.peek();
                        // a record's compact constructor is its header, already counted
                        boolean compact = constructor && c.getKind() == Tree.Kind.RECORD && names.equals(components(c));
                        if (!compact) {
                            out.add(new Declaration(constructor ? "new" : "method", type(), constructor ? "" : m.getName().toString(),
                                    names.size()));
                        }
                        return super.visitMethod(m, unused);
                    }

                    private String type() {
                        return String.join(".", types);
                    }
                }.scan(unit, null);
            }
        }
        return out;
    }

    /** A record's components: its instance fields, as the parser gives them. */
    static List<String> components(ClassTree record) {
        return record.getMembers().stream()
                .filter(m -> m instanceof VariableTree v && !v.getModifiers().getFlags().contains(Modifier.STATIC))
                .map(m -> ((VariableTree) m).getName().toString()).toList();
    }

    /** The main sources of every module the BOM lists: what a user installs. */
    static List<Path> shippedSources() throws IOException {
        Path root = TestLanesTest.repository();
        String bom = Files.readString(root.resolve("bom/pom.xml"), StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("<artifactId>queen-timers-([a-z0-9-]+)</artifactId>").matcher(bom);
        List<Path> out = new ArrayList<>();
        List<String> modules = new ArrayList<>();
        while (m.find()) {
            Path main = root.resolve(m.group(1)).resolve("src/main/java");
            if (!m.group(1).equals("bom") && Files.isDirectory(main)) {
                modules.add(m.group(1));
                try (Stream<Path> s = Files.walk(main)) {
                    s.filter(p -> p.toString().endsWith(".java")).forEach(out::add);
                }
            }
        }
        assertThat(modules).as("the BOM's modules").contains("client", "core", "bridge", "sweeper", "http");
        return out;
    }
}
