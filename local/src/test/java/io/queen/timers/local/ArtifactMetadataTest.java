package io.queen.timers.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * What a team gets from {@code mvn install} (docs/development.md#versions-and-artifacts): the poms as installed, which
 * flatten-maven-plugin wrote beside each pom ({@code .flattened-pom.xml}), carry the real version and the
 * project's metadata; the BOM lists the published artifacts and nothing of the parent; the LICENSE and CHANGELOG
 * are there. The client's sources and javadoc jars exist only after {@code package}: the cli's ServiceJarIT (integration lane)
 * checks them.
 */
class ArtifactMetadataTest {

    static final Path ROOT = Path.of("..");
    static final String VERSION = System.getProperty("project.version");
    static final String GROUP = "io.queen.timers";
    /**
     * Modules that are not published: this repository's test kit and harnesses, nothing outside it should depend on.
     * (The kit for a team's tests, module test, is published, and with it the stack it builds on and the embedded servers.)
     */
    static final Set<String> INTERNAL = Set.of("testkit", "processes", "compat-kafka3", "e2e", "bench", "faults", "soak", "image", "release");

    @Test
    void theVersionIsOneRevisionWrittenOutInEveryInstalledPom() throws Exception {
        assertThat(VERSION).as("the build's version").isNotBlank().doesNotContain("$");
        Document root = read(ROOT.resolve("pom.xml"));
        assertThat(text(root.getDocumentElement(), "version")).isEqualTo("${revision}");
        assertThat(text(child(root.getDocumentElement(), "properties"), "revision")).isEqualTo(VERSION);
        List<String> modules = modules();
        assertThat(modules).contains("bom", "client", "cli", "local");
        for (String module : modules) {
            Path source = ROOT.resolve(module).resolve("pom.xml");
            Element written = read(source).getDocumentElement();
            Element writtenParent = child(written, "parent"); // the BOM has none (see bom/pom.xml)
            assertThat(text(writtenParent == null ? written : writtenParent, "version")).as(source.toString()).isEqualTo("${revision}");
            if (INTERNAL.contains(module)) {
                // not published; and some (processes, e2e, bench, ...) come after this module in the reactor, so on a
                // clean clone their flattened pom is not written yet when this test runs
                continue;
            }
            Path installed = ROOT.resolve(module).resolve(".flattened-pom.xml");
            assertThat(installed).as("flattened pom of %s (built?)", module).exists();
            assertThat(Files.readString(installed)).as(installed.toString()).doesNotContain("${revision}");
            Element project = read(installed).getDocumentElement();
            Element parent = child(project, "parent");
            String version = parent == null ? text(project, "version") : text(parent, "version");
            assertThat(version).as(installed.toString()).isEqualTo(VERSION);
        }
        Element parent = read(ROOT.resolve(".flattened-pom.xml")).getDocumentElement();
        assertThat(text(parent, "version")).isEqualTo(VERSION);
        assertMetadata(parent);
    }

    @Test
    void theBomListsThePublishedArtifactsAtThisVersionAndNothingOfTheParent() throws Exception {
        Element bom = read(ROOT.resolve("bom").resolve(".flattened-pom.xml")).getDocumentElement();
        assertThat(text(bom, "artifactId")).isEqualTo("queen-timers-bom");
        assertThat(text(bom, "groupId")).isEqualTo(GROUP);
        assertThat(text(bom, "version")).isEqualTo(VERSION);
        assertThat(child(bom, "parent")).as("an import brings the parent's dependencyManagement too: none").isNull();
        assertMetadata(bom);

        Set<String> listed = new TreeSet<>();
        for (Element d : children(child(child(bom, "dependencyManagement"), "dependencies"), "dependency")) {
            assertThat(text(d, "groupId")).isEqualTo(GROUP);
            assertThat(text(d, "version")).as(text(d, "artifactId")).isEqualTo(VERSION);
            listed.add(text(d, "artifactId"));
        }
        Set<String> published = modules().stream().filter(m -> !m.equals("bom") && !INTERNAL.contains(m))
                .map(m -> "queen-timers-" + m).collect(Collectors.toCollection(TreeSet::new));
        assertThat(listed).as("every module is in the BOM or named internal here").isEqualTo(published);
    }

    @Test
    void theLicenseTheChangelogAndTheReadmesBomSnippetAreThere() throws Exception {
        String license = Files.readString(ROOT.resolve("LICENSE"));
        assertThat(license.strip()).startsWith("Apache License").contains("Version 2.0, January 2004", "END OF TERMS AND CONDITIONS");
        String readme = Files.readString(ROOT.resolve("README.md"));
        assertThat(readme).as("README \"Use it from Java\": the BOM import at this version").contains(
                "<artifactId>queen-timers-bom</artifactId><version>" + VERSION + "</version><type>pom</type><scope>import</scope>");
        String changelog = Files.readString(ROOT.resolve("CHANGELOG.md"));
        assertThat(changelog).contains("keepachangelog.com", "## [Unreleased]");
    }

    /** The metadata a repository such as Maven Central asks of every published pom. */
    static void assertMetadata(Element project) {
        assertThat(text(project, "name")).isNotBlank();
        assertThat(text(project, "description")).isNotBlank();
        assertThat(text(project, "url")).isEqualTo("https://github.com/queen-timers/queen-timers");
        Element license = child(child(project, "licenses"), "license");
        assertThat(text(license, "name")).isEqualTo("Apache-2.0");
        assertThat(text(license, "url")).isEqualTo("https://www.apache.org/licenses/LICENSE-2.0.txt");
        assertThat(text(child(child(project, "developers"), "developer"), "name")).isNotBlank();
        Element scm = child(project, "scm");
        assertThat(text(scm, "url")).isEqualTo("https://github.com/queen-timers/queen-timers");
        assertThat(text(scm, "connection")).isEqualTo("scm:git:https://github.com/queen-timers/queen-timers.git");
        assertThat(text(child(project, "issueManagement"), "url")).isEqualTo("https://github.com/queen-timers/queen-timers/issues");
    }

    static List<String> modules() throws Exception {
        List<String> modules = new ArrayList<>();
        for (Element m : children(child(read(ROOT.resolve("pom.xml")).getDocumentElement(), "modules"), "module")) {
            modules.add(m.getTextContent().strip());
        }
        return modules;
    }

    static Document read(Path pom) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
    }

    static Element child(Element parent, String name) {
        List<Element> all = children(parent, name);
        return all.isEmpty() ? null : all.get(0);
    }

    static List<Element> children(Element parent, String name) {
        assertThat(parent).as("parent of <%s>", name).isNotNull();
        List<Element> found = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            Node n = nodes.item(i);
            if (n instanceof Element e && e.getTagName().equals(name)) {
                found.add(e);
            }
        }
        return found;
    }

    static String text(Element parent, String name) {
        Element e = child(parent, name);
        return e == null ? null : e.getTextContent().strip();
    }
}
