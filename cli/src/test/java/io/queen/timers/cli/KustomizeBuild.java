package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The part of {@code kustomize build} that deploy/kubernetes uses, so its test reads what {@code kubectl apply -k}
 * would apply without kustomize on the machine: resources (files and directories), labels (metadata only),
 * namespace, images, replicas, secretGenerator from env files and files, configMapGenerator from files, and patches that only
 * set map fields (a strategic merge patch of maps is a deep merge). Any other field, or a patch with a list in it,
 * fails: the test does not pretend to resolve what it cannot. Generated Secrets and ConfigMaps keep their name
 * (kustomize adds a hash suffix and rewrites every reference to it, which changes no reference's meaning);
 * Secrets are read from {@code <file>.example} (the real env files and key files are git-ignored), ConfigMaps from the
 * committed files (the example's CA is a placeholder to replace, not a secret).
 */
final class KustomizeBuild {

    static final YAMLMapper YAML = new YAMLMapper();
    static final Set<String> FIELDS = Set.of("apiVersion", "kind", "resources", "labels", "namespace", "images", "replicas",
            "secretGenerator", "configMapGenerator", "patches");

    private KustomizeBuild() {}

    static List<ObjectNode> build(Path dir) {
        JsonNode k = documents(dir.resolve("kustomization.yaml")).get(0);
        k.fieldNames().forEachRemaining(f -> assertThat(FIELDS).as("%s: kustomization field %s (this test resolves only %s)", dir, f, FIELDS)
                .contains(f));
        assertThat(k.path("kind").asText()).isEqualTo("Kustomization");
        List<ObjectNode> out = new ArrayList<>();
        for (JsonNode r : k.path("resources")) {
            Path p = dir.resolve(r.asText()).normalize();
            if (Files.isDirectory(p)) {
                out.addAll(build(p));
            } else {
                documents(p).forEach(d -> out.add((ObjectNode) d));
            }
        }
        for (JsonNode g : k.path("secretGenerator")) {
            ObjectNode secret = JsonNodeFactory.instance.objectNode();
            secret.put("apiVersion", "v1").put("kind", "Secret").putObject("metadata").put("name", g.get("name").asText());
            ObjectNode data = secret.putObject("stringData");
            g.fieldNames().forEachRemaining(f -> assertThat(f).as("secretGenerator field").isIn("name", "envs", "files"));
            for (JsonNode env : g.path("envs")) {
                for (String line : read(dir.resolve(env.asText() + ".example")).split("\n")) {
                    String l = line.strip();
                    if (!l.isEmpty() && !l.startsWith("#")) {
                        int eq = l.indexOf('=');
                        data.put(l.substring(0, eq), l.substring(eq + 1));
                    }
                }
            }
            putFiles(g, data, dir, ".example"); // as configMapGenerator's, the content from `<path>.example`
            out.add(secret);
        }
        for (JsonNode g : k.path("configMapGenerator")) {
            ObjectNode map = JsonNodeFactory.instance.objectNode();
            map.put("apiVersion", "v1").put("kind", "ConfigMap").putObject("metadata").put("name", g.get("name").asText());
            ObjectNode data = map.putObject("data");
            g.fieldNames().forEachRemaining(f -> assertThat(f).as("configMapGenerator field").isIn("name", "files"));
            putFiles(g, data, dir, "");
            out.add(map);
        }
        for (JsonNode l : k.path("labels")) {
            assertThat(l.path("includeSelectors").asBoolean(false)).as("labels: only metadata labels are resolved").isFalse();
            assertThat(l.has("includeTemplates")).isFalse();
            for (ObjectNode o : out) {
                ObjectNode labels = metadata(o).has("labels") ? (ObjectNode) metadata(o).get("labels") : metadata(o).putObject("labels");
                l.get("pairs").fields().forEachRemaining(e -> labels.set(e.getKey(), e.getValue()));
            }
        }
        for (JsonNode p : k.path("patches")) {
            p.fieldNames().forEachRemaining(f -> assertThat(f).as("patch field (only strategic merge patches by path)").isEqualTo("path"));
            for (JsonNode patch : documents(dir.resolve(p.get("path").asText()))) {
                ObjectNode target = find(out, patch.get("kind").asText(), patch.get("metadata").get("name").asText());
                merge(target, (ObjectNode) patch, p.get("path").asText());
            }
        }
        for (JsonNode i : k.path("images")) {
            for (ObjectNode o : out) {
                for (JsonNode c : o.path("spec").path("template").path("spec").path("containers")) {
                    String image = c.get("image").asText();
                    String name = image.contains(":") ? image.substring(0, image.indexOf(':')) : image;
                    if (name.equals(i.get("name").asText())) {
                        ((ObjectNode) c).put("image", i.path("newName").asText(name) + ":" + i.get("newTag").asText());
                    }
                }
            }
        }
        for (JsonNode r : k.path("replicas")) {
            ((ObjectNode) find(out, "Deployment", r.get("name").asText()).get("spec")).put("replicas", r.get("count").asInt());
        }
        if (k.has("namespace")) {
            out.forEach(o -> metadata(o).put("namespace", k.get("namespace").asText()));
        }
        return out;
    }

    static ObjectNode find(List<ObjectNode> objects, String kind, String name) {
        return objects.stream().filter(o -> o.path("kind").asText().equals(kind) && o.path("metadata").path("name").asText().equals(name))
                .findFirst().orElseThrow(() -> new AssertionError("no " + kind + " " + name));
    }

    private static void merge(ObjectNode target, ObjectNode patch, String where) {
        for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            assertThat(e.getValue().isArray()).as("%s: %s is a list (this test merges maps only)", where, e.getKey()).isFalse();
            if (e.getValue().isObject() && target.get(e.getKey()) instanceof ObjectNode t) {
                merge(t, (ObjectNode) e.getValue(), where);
            } else {
                target.set(e.getKey(), e.getValue());
            }
        }
    }

    private static ObjectNode metadata(ObjectNode o) {
        return (ObjectNode) o.get("metadata");
    }

    static List<JsonNode> documents(Path p) {
        try {
            List<JsonNode> out = new ArrayList<>();
            YAML.readValues(YAML.createParser(p.toFile()), JsonNode.class).forEachRemaining(d -> {
                if (d != null && !d.isEmpty()) {
                    out.add(d);
                }
            });
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(p + " is not YAML: " + e.getMessage(), e);
        }
    }

    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A generator's {@code files}: {@code key=path} or {@code path} (the key is then the file's name), read from {@code path + suffix}. */
    private static void putFiles(JsonNode generator, ObjectNode data, Path dir, String suffix) {
        for (JsonNode f : generator.path("files")) {
            String spec = f.asText();
            int eq = spec.indexOf('=');
            String file = eq < 0 ? spec : spec.substring(eq + 1);
            String key = eq < 0 ? Path.of(file).getFileName().toString() : spec.substring(0, eq);
            assertThat(data.has(key)).as("%s: key %s twice", generator.get("name").asText(), key).isFalse();
            data.put(key, read(dir.resolve(file + suffix)));
        }
    }
}
