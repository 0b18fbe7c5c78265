package io.queen.timers.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * How the modules may depend on each other (docs/development.md#layout), read from the poms and the sources:
 * a service (bridge, sweeper, http) depends on shared parts only, never on another service, a launcher or a rig, in
 * any scope; and every module declares each module whose classes its code names, in the scope it names them from.
 *
 * <p>Read from the source text (comments and strings aside), not from class files: this module's tests run before the
 * others are compiled. A reference is a fully qualified name ({@code import} or in the code) of a class of another
 * module, or the simple name of a class of another module in the same package. The price: a reference the text does not
 * show (a class named only by reflection) passes unseen, as it would with {@code mvn dependency:analyze}.
 */
class ModuleDependenciesTest {

    /** The processes that ship: each may use the shared parts and nothing else of the project. */
    static final Set<String> SERVICES = Set.of("bridge", "sweeper", "http");
    /** What assembles the services into what a user runs: may depend on them. */
    static final Set<String> LAUNCHERS = Set.of("cli", "local", "test");
    /** Rigs and the build's own modules: tests, benchmarks, harnesses, the image and the release folder. */
    static final Set<String> RIGS = Set.of("processes", "bench", "faults", "soak", "e2e", "compat-kafka3", "image", "release", "bom");
    /**
     * The test kits: the test kit and the test stack (docs/development.md#test-stack) are shared parts, but a service may
     * use them only in its tests. Every other module is a shared part (client, sql, log, core, routes, embedded, ...): the
     * price of naming the other kinds instead of the shared parts is that a new rig counts as shared until it is added to
     * {@link #RIGS}.
     */
    static final Set<String> TEST_KITS = Set.of("testkit", "stack");

    static final String GROUP = "io.queen.timers";
    static final String PREFIX = "queen-timers-";

    @Test
    void aServiceDependsOnSharedPartsOnly() {
        Map<String, Module> modules = Module.all(TestLanesTest.repository());
        assertThat(modules.keySet()).containsAll(SERVICES).containsAll(LAUNCHERS).containsAll(TEST_KITS);
        Map<String, List<String>> wrong = new TreeMap<>();
        for (String service : SERVICES) {
            for (Dependency d : modules.get(service).dependencies) {
                if (SERVICES.contains(d.module) || LAUNCHERS.contains(d.module) || RIGS.contains(d.module)
                        || (TEST_KITS.contains(d.module) && !d.scope.equals("test"))) {
                    wrong.computeIfAbsent(service, k -> new ArrayList<>()).add(d.toString());
                }
            }
        }
        assertThat(wrong).as("a service depends on shared parts only (the test kits in their tests): what two services need "
                + "is a shared part of its own (as routes is for the bridge and the HTTP API); a test of two processes "
                + "lives in e2e; docs/development.md#layout").isEmpty();
    }

    @Test
    void everyModuleDeclaresTheModulesItsCodeNames() {
        Map<String, Module> modules = Module.all(TestLanesTest.repository());
        Map<String, Owner> classes = new HashMap<>();      // fully qualified class name -> where it is
        Map<String, List<Owner>> byPackage = new HashMap<>();
        for (Module m : modules.values()) {
            for (Source s : m.sources) {
                Owner o = new Owner(m.name, s.test, s.pkg, s.simpleName);
                classes.put(s.pkg + "." + s.simpleName, o);
                byPackage.computeIfAbsent(s.pkg, k -> new ArrayList<>()).add(o);
            }
        }
        Set<String> missing = new TreeSet<>();
        for (Module m : modules.values()) {
            for (Source s : m.sources) {
                for (Owner used : s.references(classes, byPackage)) {
                    if (used.module.equals(m.name)) {
                        continue;
                    }
                    String why = m.declares(used, s.test);
                    if (why != null) {
                        missing.add(m.name + (s.test ? " (test) " : " ") + s.pkg + "." + s.simpleName + " names "
                                + used.pkg + "." + used.simpleName + ": " + why);
                    }
                }
            }
        }
        assertThat(missing).as("each module declares in its pom every module whose classes it names (a transitive "
                + "dependency is another module's choice, which it may drop)").isEmpty();
    }

    @Test
    void theScanSeesImportsQualifiedNamesAndSamePackageNames() {
        Map<String, Owner> classes = Map.of(
                "io.queen.timers.log.codec.TxnHash", new Owner("log", false, "io.queen.timers.log.codec", "TxnHash"),
                "io.queen.timers.sweeper.Staging", new Owner("sweeper", true, "io.queen.timers.sweeper", "Staging"),
                "io.queen.timers.testkit.Poison", new Owner("testkit", false, "io.queen.timers.testkit", "Poison"),
                "io.queen.timers.core.db.Roles", new Owner("core", false, "io.queen.timers.core.db", "Roles"));
        Map<String, List<Owner>> byPackage = Map.of("io.queen.timers.sweeper", List.of(classes.get("io.queen.timers.sweeper.Staging")));
        Source s = new Source(true, "io.queen.timers.sweeper", "FireIT", """
                package io.queen.timers.sweeper;
                import static io.queen.timers.log.codec.TxnHash.of;
                /** {@link io.queen.timers.core.db.Roles} in a comment is no reference */
                class FireIT {
                    String s = "io.queen.timers.core.db.Roles";
                    void t() { io.queen.timers.testkit.Poison.install(null); new Staging(); }
                }
                """);
        assertThat(s.references(classes, byPackage)).extracting(o -> o.simpleName).containsExactlyInAnyOrder("TxnHash", "Poison", "Staging");
    }

    record Owner(String module, boolean test, String pkg, String simpleName) {}

    record Dependency(String module, String scope, String type) {
        @Override
        public String toString() {
            return PREFIX + module + (type.equals("jar") ? "" : ":" + type) + " (" + scope + ")";
        }
    }

    /** One source file: its package, its class's simple name, its code without comments and strings. */
    record Source(boolean test, String pkg, String simpleName, String code) {
        private static final Pattern PACKAGE = Pattern.compile("^\\s*package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
        /** A name under io.queen.timers up to its first capitalised part: the outermost class it names. */
        private static final Pattern QUALIFIED = Pattern.compile("\\bio\\.queen\\.timers\\.((?:[a-z_][a-z0-9_]*\\.)*)([A-Z][A-Za-z0-9_]*)");
        private static final Pattern WILDCARD = Pattern.compile("\\bimport\\s+(io\\.queen\\.timers(?:\\.[a-z_][a-z0-9_]*)+)\\.\\*\\s*;");
        private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*");

        Source(boolean test, String pkg, String simpleName, String code) {
            this.test = test;
            this.pkg = pkg;
            this.simpleName = simpleName;
            this.code = TestLanesTest.Scan.code(code, false);
        }

        static Source read(Path file, boolean test) {
            try {
                String text = Files.readString(file, StandardCharsets.UTF_8);
                Matcher p = PACKAGE.matcher(TestLanesTest.Scan.code(text, false));
                return new Source(test, p.find() ? p.group(1) : "", TestLanesTest.simpleName(file), text);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** The project's classes this file names: by qualified name, by a wildcard import, or as a neighbour in its package. */
        List<Owner> references(Map<String, Owner> classes, Map<String, List<Owner>> byPackage) {
            List<Owner> out = new ArrayList<>();
            Matcher q = QUALIFIED.matcher(code);
            while (q.find()) {
                Owner o = classes.get("io.queen.timers." + q.group(1) + q.group(2));
                if (o != null) {
                    out.add(o);
                }
            }
            Set<String> identifiers = new TreeSet<>();
            Matcher id = IDENTIFIER.matcher(code);
            while (id.find()) {
                identifiers.add(id.group());
            }
            List<Owner> visible = new ArrayList<>(byPackage.getOrDefault(pkg, List.of()));
            Matcher w = WILDCARD.matcher(code);
            while (w.find()) {
                visible.addAll(byPackage.getOrDefault(w.group(1), List.of()));
            }
            for (Owner o : visible) {
                if (identifiers.contains(o.simpleName) && !o.simpleName.equals(simpleName)) {
                    out.add(o);
                }
            }
            return out;
        }
    }

    /** A module of the root pom: its project dependencies and its Java sources. */
    record Module(String name, List<Dependency> dependencies, List<Source> sources) {

        static Map<String, Module> all(Path root) {
            Map<String, Module> out = new TreeMap<>();
            for (String name : childTexts(pom(root.resolve("pom.xml")), "modules", "module")) {
                Path dir = root.resolve(name);
                List<Dependency> deps = new ArrayList<>();
                Element deps0 = child(pom(dir.resolve("pom.xml")), "dependencies");
                if (deps0 != null) {
                    for (Element d : children(deps0, "dependency")) {
                        String artifact = text(d, "artifactId");
                        if (GROUP.equals(text(d, "groupId")) && artifact.startsWith(PREFIX)) {
                            deps.add(new Dependency(artifact.substring(PREFIX.length()), orElse(text(d, "scope"), "compile"),
                                    orElse(text(d, "type"), "jar")));
                        }
                    }
                }
                List<Source> sources = new ArrayList<>();
                sources.addAll(sources(dir.resolve("src/main/java"), false));
                sources.addAll(sources(dir.resolve("src/test/java"), true));
                out.put(name, new Module(name, deps, sources));
            }
            assertThat(out).as("modules of " + root.resolve("pom.xml")).hasSizeGreaterThan(10);
            return out;
        }

        /** Null when this module may name {@code used} from its main ({@code fromTest} false) or test code; else why not. */
        String declares(Owner used, boolean fromTest) {
            String type = used.test ? "test-jar" : "jar";
            if (used.test && !fromTest) {
                return "product code names a class of " + PREFIX + used.module + "'s tests";
            }
            for (Dependency d : dependencies) {
                if (d.module.equals(used.module) && d.type.equals(type)
                        && (fromTest || d.scope.equals("compile") || d.scope.equals("provided"))) {
                    return null;
                }
            }
            return "declare " + PREFIX + used.module + (used.test ? " (type test-jar, scope test)" : fromTest ? " (scope test or wider)" : "");
        }

        private static List<Source> sources(Path dir, boolean test) {
            if (!Files.isDirectory(dir)) {
                return List.of();
            }
            try (Stream<Path> s = Files.walk(dir)) {
                return s.filter(p -> p.toString().endsWith(".java") && !p.getFileName().toString().equals("package-info.java"))
                        .map(p -> Source.read(p, test)).toList();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    static Element pom(Path file) {
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            return f.newDocumentBuilder().parse(file.toFile()).getDocumentElement();
        } catch (Exception e) {
            throw new IllegalStateException("cannot read " + file, e);
        }
    }

    static String orElse(String v, String dflt) {
        return v == null ? dflt : v;
    }

    static List<String> childTexts(Element parent, String list, String item) {
        Element l = child(parent, list);
        return l == null ? List.of() : children(l, item).stream().map(e -> e.getTextContent().trim()).toList();
    }

    static Element child(Element parent, String name) {
        List<Element> c = children(parent, name);
        return c.isEmpty() ? null : c.get(0);
    }

    static List<Element> children(Element parent, String name) {
        List<Element> out = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                out.add(e);
            }
        }
        return out;
    }

    static String text(Element parent, String name) {
        Element c = child(parent, name);
        return c == null ? null : c.getTextContent().trim();
    }
}
