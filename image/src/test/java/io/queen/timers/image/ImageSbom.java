package io.queen.timers.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.packageurl.PackageURL;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.cyclonedx.Version;
import org.cyclonedx.generators.BomGeneratorFactory;
import org.cyclonedx.model.Bom;
import org.cyclonedx.model.Component;
import org.cyclonedx.model.Dependency;
import org.cyclonedx.model.Evidence;
import org.cyclonedx.model.Hash;
import org.cyclonedx.model.Metadata;
import org.cyclonedx.model.OrganizationalEntity;
import org.cyclonedx.model.Property;
import org.cyclonedx.model.component.evidence.Occurrence;

/**
 * The image's SBOM (docs/install.md#the-container-image): CycloneDX 1.6 JSON of what the image tar holds, written by
 * {@code -Prelease} beside the tar as {@code queen-timers-image-VERSION-cyclonedx.json}. Read from the tar's layers, not
 * from the build's inputs, so it lists what a {@code docker load} gets: every jar in the layers with its SHA-256 (the
 * service jar, and nested in it the components it bundles: the service's runtime dependency graph,
 * cli/target/dependency-tree.json, and the libraries a dependency's own jar carries inside it, by their
 * pom.properties); the jlink-ed Java runtime (its version, the modules jlink kept, the Debian
 * package it was linked from); the Debian packages whose shared objects image/rootfs copied (name, version, every file of
 * theirs in the image), from image/target/rootfs-packages.tsv. Every component has a purl, so a scanner (Trivy, Grype,
 * Dependency-Track) can match it against advisories.
 *
 * <p>It lives in the test sources on purpose: Jib layers every main class and runtime dependency of this module into
 * the image, so a main class here would ship cyclonedx-core-java inside the image. The price: a build that skips
 * compiling tests ({@code -Dmaven.test.skip}) cannot make the image's SBOM, and fails instead.
 *
 * <p>Arguments: the image tar, Jib's image digest file, the service's dependency tree, rootfs-packages.tsv, the
 * version, the output file.
 */
public final class ImageSbom {

    static final String RUNTIME = "/opt/java";
    static final String SERVICE_JAR = "/app/queen-timers.jar";

    private ImageSbom() {}

    public static void main(String[] args) throws Exception {
        Path tar = Path.of(args[0]);
        String digest = Files.readString(Path.of(args[1])).strip();
        JsonNode tree = new ObjectMapper().readTree(Path.of(args[2]).toFile());
        List<String[]> owners = Files.readAllLines(Path.of(args[3])).stream()
                .filter(l -> !l.isBlank()).map(l -> l.split("\t")).toList();
        String version = args[4];
        Path out = Path.of(args[5]);
        Bom bom = of(layers(tar), digest, tree, owners, version, distro(Path.of("/etc/os-release")));
        Files.writeString(out, BomGeneratorFactory.createJson(Version.VERSION_16, bom).toJsonString());
        System.out.println("image SBOM: " + out + " (" + bom.getComponents().size() + " components)");
    }

    /** A file in the image: its path, its SHA-256 (null for a link), its bytes when it is a jar or small enough to read. */
    record ImageFile(String path, String sha256, String linkTarget, byte[] text) {}

    /** Every regular file and link of the image's layers, keyed by its absolute path (a later layer wins). */
    static Map<String, ImageFile> layers(Path tar) throws IOException {
        Map<String, byte[]> entries = new HashMap<>();
        try (TarArchiveInputStream in = new TarArchiveInputStream(Files.newInputStream(tar))) {
            for (TarArchiveEntry e; (e = in.getNextEntry()) != null; ) {
                if (e.isFile()) {
                    entries.put(e.getName(), in.readAllBytes());
                }
            }
        }
        JsonNode manifest = new ObjectMapper().readTree(entries.get("manifest.json"));
        Map<String, ImageFile> files = new TreeMap<>();
        for (JsonNode layer : manifest.get(0).path("Layers")) {
            byte[] gz = entries.get(layer.asText());
            try (TarArchiveInputStream in = new TarArchiveInputStream(new GZIPInputStream(new ByteArrayInputStream(gz)))) {
                for (TarArchiveEntry e; (e = in.getNextEntry()) != null; ) {
                    String path = "/" + e.getName().replaceFirst("^\\./", "").replaceFirst("^/", "");
                    if (e.isSymbolicLink()) {
                        files.put(path, new ImageFile(path, null, e.getLinkName(), null));
                    } else if (e.isFile()) {
                        byte[] content = in.readAllBytes();
                        boolean keep = content.length < 65536 || path.endsWith(".jar"); // the jars are read for what they bundle
                        files.put(path, new ImageFile(path, sha256(content), null, keep ? content : null));
                    }
                }
            }
        }
        return files;
    }

    static Bom of(Map<String, ImageFile> files, String digest, JsonNode serviceTree, List<String[]> owners, String version,
            String distro) throws Exception {
        Bom bom = new Bom();
        bom.setSerialNumber("urn:uuid:" + UUID.nameUUIDFromBytes(digest.getBytes(StandardCharsets.UTF_8)));
        Component image = component(Component.Type.CONTAINER, null, "queen-timers", version,
                new PackageURL("oci", null, "queen-timers", digest, new TreeMap<>(Map.of("tag", version)), null));
        image.setDescription("The OCI image of the service jar: Jib over scratch, a jlink-ed runtime and the C libraries it"
                + " links (docs/install.md#the-container-image)");
        Metadata metadata = new Metadata();
        metadata.setTimestamp(new Date());
        metadata.setComponent(image);
        bom.setMetadata(metadata);
        Dependency imageDeps = new Dependency(image.getBomRef());
        List<Dependency> graph = new ArrayList<>();
        graph.add(imageDeps);

        // the jars: the service jar, its bundled components nested in it (from the dependency graph it was shaded from)
        for (ImageFile f : files.values()) {
            if (!f.path().endsWith(".jar") || f.sha256() == null || f.path().startsWith(RUNTIME + "/")) {
                continue; // the runtime's own jar (lib/jrt-fs.jar) is part of the runtime component
            }
            if (!f.path().equals(SERVICE_JAR)) { // a jar this class cannot name: fail, rather than an SBOM that omits it
                throw new IllegalStateException("a jar in the image that the SBOM knows nothing of: " + f.path());
            }
            Component jar = maven(serviceTree, "required");
            jar.setType(Component.Type.APPLICATION);
            jar.addHash(new Hash(Hash.Algorithm.SHA_256, f.sha256()));
            jar.setEvidence(at(List.of(f.path())));
            jar.setDescription("The service-only launcher, shaded: the components below are the classes it bundles");
            Map<String, Component> bundled = new LinkedHashMap<>();
            bundle(serviceTree, bundled);
            embedded(f.text(), jar, bundled);
            jar.setComponents(new ArrayList<>(bundled.values()));
            Dependency bundles = new Dependency(jar.getBomRef());
            bundled.keySet().forEach(ref -> bundles.addDependency(new Dependency(ref)));
            graph.add(bundles);
            bom.addComponent(jar);
            imageDeps.addDependency(new Dependency(jar.getBomRef()));
        }

        // the Debian packages the shared objects came from, and the runtime linked from one
        Map<String, Component> packages = new LinkedHashMap<>();
        Map<String, List<String>> paths = new LinkedHashMap<>();
        for (String[] o : owners) { // package, version, architecture, path in the image
            String key = o[0] + " " + o[1];
            paths.computeIfAbsent(key, k -> new ArrayList<>()).add(o[3]);
            packages.computeIfAbsent(key, k -> {
                try {
                    Component c = component(Component.Type.LIBRARY, null, o[0], o[1], new PackageURL("deb", "debian", o[0],
                            o[1], new TreeMap<>(Map.of("arch", o[2], "distro", distro)), null));
                    c.setPublisher("Debian");
                    return c;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        }
        Component runtime = null;
        for (Map.Entry<String, Component> p : packages.entrySet()) {
            List<String> in = paths.get(p.getKey());
            Component c = p.getValue();
            if (in.contains(RUNTIME)) {
                runtime = runtime(files, c);
                c = runtime;
            } else {
                for (String path : in) {
                    ImageFile f = files.get(path);
                    if (f == null) {
                        throw new IllegalStateException(path + " of " + p.getKey() + " is not in the image");
                    }
                }
                c.setEvidence(at(in));
            }
            bom.addComponent(c);
            imageDeps.addDependency(new Dependency(c.getBomRef()));
        }
        if (runtime == null) {
            throw new IllegalStateException("rootfs-packages.tsv names no package for the runtime (" + RUNTIME + ")");
        }
        bom.setDependencies(graph);
        return bom;
    }

    /** The jlink-ed runtime: the JDK's version, the modules jlink kept, the Debian package whose jmods it was linked from. */
    static Component runtime(Map<String, ImageFile> files, Component linkedFrom) throws IOException {
        ImageFile release = files.get(RUNTIME + "/release");
        if (release == null || release.text() == null) {
            throw new IllegalStateException("no " + RUNTIME + "/release in the image");
        }
        Properties p = new Properties();
        p.load(new ByteArrayInputStream(release.text()));
        String javaVersion = p.getProperty("JAVA_VERSION").replace("\"", "");
        String modules = p.getProperty("MODULES").replace("\"", "");
        Component c = new Component();
        c.setType(Component.Type.PLATFORM);
        c.setName("openjdk");
        c.setVersion(runtimeVersion(files).orElse(javaVersion));
        c.setPublisher(linkedFrom.getPublisher());
        OrganizationalEntity supplier = new OrganizationalEntity();
        supplier.setName("Debian");
        c.setSupplier(supplier);
        c.setPurl(linkedFrom.getPurl());
        c.setBomRef(linkedFrom.getBomRef());
        c.setDescription("Java " + javaVersion + " runtime, jlink-ed from the Debian package " + linkedFrom.getName() + " "
                + linkedFrom.getVersion() + "; only the modules listed in jlink.modules");
        c.addProperty(property("java.version", javaVersion));
        c.addProperty(property("jlink.modules", modules));
        c.addProperty(property("debian.package", linkedFrom.getName() + " " + linkedFrom.getVersion()));
        c.setEvidence(at(List.of(RUNTIME)));
        return c;
    }

    /** The full runtime version image/rootfs wrote into /etc/queen-timers-base ("jdk 17.0.15+6-Debian-1deb12u1"). */
    static java.util.Optional<String> runtimeVersion(Map<String, ImageFile> files) {
        ImageFile base = files.get("/etc/queen-timers-base");
        if (base == null || base.text() == null) {
            return java.util.Optional.empty();
        }
        return new String(base.text(), StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("jdk "))
                .map(l -> l.substring(4).strip()).findFirst();
    }

    /**
     * Every node of a dependency:tree JSON whose resolved scope is compile or runtime, wherever it hangs (Maven puts a
     * library under its nearest path, a test one included, and widens its scope there), once by purl: the runtime
     * classpath the shaded jar was made from. Flat, under the jar: the tree's edges are mediation's, not "needs".
     */
    static void bundle(JsonNode node, Map<String, Component> out) throws Exception {
        for (JsonNode child : node.path("children")) {
            String scope = child.path("scope").asText();
            if (scope.equals("compile") || scope.equals("runtime")) {
                Component c = maven(child, "required");
                out.putIfAbsent(c.getBomRef(), c);
            }
            bundle(child, out);
        }
    }

    /**
     * What the dependency graph does not show: a library that a dependency's own jar carries inside it (nimbus-jose-jwt
     * ships jcip-annotations), found by the {@code META-INF/maven/G/A/pom.properties} it brought into the shaded jar.
     * Listed unless the graph names that group, name and version already.
     */
    static void embedded(byte[] jar, Component self, Map<String, Component> bundled) throws Exception {
        java.util.Set<String> known = new java.util.HashSet<>();
        known.add(self.getGroup() + ":" + self.getName() + ":" + self.getVersion());
        bundled.values().forEach(c -> known.add(c.getGroup() + ":" + c.getName() + ":" + c.getVersion()));
        try (java.util.zip.ZipInputStream zip = new java.util.zip.ZipInputStream(new ByteArrayInputStream(jar))) {
            for (java.util.zip.ZipEntry e; (e = zip.getNextEntry()) != null; ) {
                if (!e.getName().matches("META-INF/maven/[^/]+/[^/]+/pom\\.properties")) {
                    continue;
                }
                Properties p = new Properties();
                p.load(new ByteArrayInputStream(zip.readAllBytes()));
                String g = p.getProperty("groupId");
                String a = p.getProperty("artifactId");
                String v = p.getProperty("version");
                if (known.add(g + ":" + a + ":" + v)) {
                    ObjectMapper json = new ObjectMapper();
                    Component c = maven(json.createObjectNode().put("groupId", g).put("artifactId", a).put("version", v)
                            .put("type", "jar").put("classifier", ""), "required");
                    c.setDescription("Inside another dependency's jar (its " + e.getName() + " is in the shaded jar)");
                    bundled.putIfAbsent(c.getBomRef(), c);
                }
            }
        }
    }

    static Component maven(JsonNode node, String scope) throws Exception {
        Component c = component(Component.Type.LIBRARY, node.path("groupId").asText(), node.path("artifactId").asText(),
                node.path("version").asText(), purl(node));
        c.setScope(Component.Scope.valueOf(scope.toUpperCase()));
        return c;
    }

    static PackageURL purl(JsonNode node) throws Exception {
        Map<String, String> qualifiers = new TreeMap<>();
        qualifiers.put("type", node.path("type").asText("jar"));
        if (!node.path("classifier").asText().isEmpty()) {
            qualifiers.put("classifier", node.path("classifier").asText());
        }
        return new PackageURL("maven", node.path("groupId").asText(), node.path("artifactId").asText(),
                node.path("version").asText(), new TreeMap<>(qualifiers), null);
    }

    static Component component(Component.Type type, String group, String name, String version, PackageURL purl) {
        Component c = new Component();
        c.setType(type);
        c.setGroup(group);
        c.setName(name);
        c.setVersion(version);
        c.setPurl(purl);
        c.setBomRef(purl.canonicalize());
        return c;
    }

    static Evidence at(List<String> paths) {
        Evidence e = new Evidence();
        List<Occurrence> occurrences = new ArrayList<>();
        for (String path : paths) {
            Occurrence o = new Occurrence();
            o.setLocation(path);
            occurrences.add(o);
        }
        e.setOccurrences(occurrences);
        return e;
    }

    static Property property(String name, String value) {
        Property p = new Property();
        p.setName("queen-timers:" + name);
        p.setValue(value);
        return p;
    }

    /** "debian-12", for the purls' distro qualifier: the build machine's, where image/rootfs copied the packages from. */
    static String distro(Path osRelease) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(osRelease)) {
            p.load(in);
        }
        return p.getProperty("ID", "debian").replace("\"", "") + "-" + p.getProperty("VERSION_ID", "").replace("\"", "");
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
