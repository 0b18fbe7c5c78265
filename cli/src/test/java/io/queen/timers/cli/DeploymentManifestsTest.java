package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.core.config.AuditTopics;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.core.ops.OpsServer;
import io.queen.timers.core.text.Secrets;
import io.queen.timers.http.HttpSettings;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.sweeper.SweeperSettings;
import java.io.IOException;
import java.io.StringReader;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * deploy/kubernetes, read as typed Kubernetes objects (fabric8's model; an unknown field anywhere fails) and checked
 * against the services themselves: every variable is a key the process declares (its own settings class, as
 * {@link ConfigDocsCommand} and docs/configuration.md's table) and every value parses and fits the heap the manifest gives, the
 * ports and probe paths are the ones the services serve ({@link OpsServer}), the ServiceMonitor's jobs are the
 * compose kit's, the PrometheusRule is the compose kit's alerts.yml, least privilege as in docker-compose.yml.
 * Checked twice: base with monitoring, and the example overlay resolved by {@link KustomizeBuild}.
 */
class DeploymentManifestsTest {

    static final Path K8S = Path.of("..", "deploy", "kubernetes");
    static final Path OVERLAY = K8S.resolve("overlays/example");
    /** The JVM's own variable: the heap is the manifest's choice (the one non-QUEEN_* variable allowed). */
    static final String JVM_OPTIONS = "JAVA_TOOL_OPTIONS";
    /**
     * What a JVM of this project held beside its heap at most, measured: RSS high-water 374 MiB at -Xmx256m
     * (bench/results/2026-12-02/NOTES.md, the memory row of the sweeper's table). A memory limit closer to the heap than this is an OOM kill waiting.
     */
    static final long NON_HEAP_MEASURED = (374L - 256) << 20;
    static final Pattern XMX = Pattern.compile("-Xmx(\\d+)([kKmMgG])");

    static final ObjectMapper JSON = new ObjectMapper();
    static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of("ConfigMap", ConfigMap.class, "Secret", Secret.class,
            "Service", Service.class, "Deployment", Deployment.class, "Job", Job.class, "PodDisruptionBudget", PodDisruptionBudget.class,
            "ServiceMonitor", ServiceMonitor.class, "PrometheusRule", PrometheusRule.class, "NetworkPolicy", NetworkPolicy.class);

    /** One build: what `kubectl apply -k` would get, as typed objects. */
    record Build(String name, List<HasMetadata> objects, boolean hasSecrets) {
        <T extends HasMetadata> List<T> all(Class<T> type) {
            return objects.stream().filter(type::isInstance).map(type::cast).toList();
        }

        <T extends HasMetadata> T named(Class<T> type, String name) {
            return all(type).stream().filter(o -> o.getMetadata().getName().equals(name)).findFirst().orElse(null);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** A container of a workload and the process it runs. */
    record Workload(String name, PodTemplateSpec template, Container container, String process, ConfigDef def) {}

    static Stream<Build> builds() {
        List<ObjectNode> base = new ArrayList<>(KustomizeBuild.build(K8S.resolve("base")));
        base.addAll(KustomizeBuild.build(K8S.resolve("monitoring")));
        return Stream.of(typed("base + monitoring", base, false), typed("overlays/example", KustomizeBuild.build(OVERLAY), true));
    }

    static Build typed(String name, List<ObjectNode> trees, boolean hasSecrets) {
        List<HasMetadata> out = new ArrayList<>();
        for (ObjectNode t : trees) {
            String kind = t.path("kind").asText();
            Class<? extends HasMetadata> type = KINDS.get(kind);
            assertThat(type).as("%s: kind %s (the test knows %s)", name, kind, KINDS.keySet()).isNotNull();
            HasMetadata o = JSON.convertValue(t, type);
            try {
                assertThat(o.getApiVersion()).as("%s %s apiVersion", kind, o.getMetadata().getName())
                        .isEqualTo(type.getDeclaredConstructor().newInstance().getApiVersion());
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
            noUnknownField(o, kind + " " + o.getMetadata().getName(), new IdentityHashMap<>());
            if (o instanceof ConfigMap cm && cm.getData() == null) {
                cm.setData(new LinkedHashMap<>());   // `data:` with only commented keys under it: none set, as the kubelet sees it
            }
            out.add(o);
        }
        return new Build(name, out, hasSecrets);
    }

    /** A misspelt field lands in fabric8's additionalProperties instead of failing: walk every object and refuse it. */
    static void noUnknownField(Object o, String path, IdentityHashMap<Object, Boolean> seen) {
        if (o == null || seen.put(o, true) != null) {
            return;
        }
        if (o instanceof Collection<?> c) {
            int i = 0;
            for (Object e : c) {
                noUnknownField(e, path + "[" + i++ + "]", seen);
            }
            return;
        }
        if (o instanceof Map<?, ?> m) {
            m.forEach((k, v) -> noUnknownField(v, path + "." + k, seen));
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.")) {
            return;
        }
        for (Method m : o.getClass().getMethods()) {
            if (m.getParameterCount() > 0 || Modifier.isStatic(m.getModifiers()) || !m.getName().startsWith("get")
                    || m.getDeclaringClass() == Object.class) {
                continue;
            }
            Object v;
            try {
                v = m.invoke(o);
            } catch (ReflectiveOperationException e) {
                continue;
            }
            if (m.getName().equals("getAdditionalProperties")) {
                assertThat((Map<?, ?>) v).as("%s: unknown field(s)", path).isNullOrEmpty();
            } else if (!(o instanceof ConfigMap || o instanceof Secret) || !m.getName().endsWith("Data")) {
                noUnknownField(v, path + "." + m.getName().substring(3), seen);
            }
        }
    }

    static List<Workload> workloads(Build b) {
        List<Workload> out = new ArrayList<>();
        b.all(Deployment.class).forEach(d -> addWorkload(out, d.getMetadata().getName(), d.getSpec().getTemplate()));
        b.all(Job.class).forEach(j -> addWorkload(out, j.getMetadata().getName(), j.getSpec().getTemplate()));
        return out;
    }

    private static void addWorkload(List<Workload> out, String name, PodTemplateSpec template) {
        assertThat(template.getSpec().getContainers()).as("%s: one container", name).hasSize(1);
        Container c = template.getSpec().getContainers().get(0);
        assertThat(c.getCommand()).as("%s keeps the image's entrypoint (java ... -jar)", name).isNullOrEmpty();
        String process = c.getArgs().get(0);
        ConfigDef def = switch (process) {
            case "bridge" -> BridgeSettings.definition();
            case "sweeper" -> SweeperSettings.definition();
            case "migrate" -> MigrateSettings.definition();
            case "http" -> HttpSettings.definition();
            default -> throw new AssertionError(name + " runs `" + process + "`, which this test does not know");
        };
        out.add(new Workload(name, template, c, process, def));
    }

    /** A variable's value and where it comes from. */
    record Value(String text, String from) {
        boolean secret() {
            return from.startsWith("Secret");
        }
    }

    /**
     * The environment as the process reads it: {@link #rawEnvironment}, each secret read from a file
     * ({@code QUEEN_<KEY>_FILE}, as {@link ConfigLoader} reads it) replaced by the variable it stands for, valued as
     * the file the pod mounts there (its Secret's or ConfigMap's key; "" where the build has no Secrets). A file on
     * no mounted volume stays as it is: {@link #everyFileTheSettingsNameIsOnAVolumeItsWorkloadMounts} says why.
     */
    static Map<String, Value> environment(Build b, Workload w) {
        Map<String, Value> env = rawEnvironment(b, w);
        for (String name : List.copyOf(env.keySet())) {
            String plain = secretFileOf(w, name);
            MountedFile f = plain == null ? null : mounted(b, w, env.get(name).text());
            if (f != null) {
                Value inline = env.get(plain);
                assertThat(inline == null || inline.text().isEmpty()).as("%s: both %s and %s are set: the process refuses to start", w.name(),
                        plain, name).isTrue();
                env.remove(name);
                env.put(plain, new Value(f.content() == null ? "" : f.content(), f.source() + " (file " + f.key() + ")"));
            }
        }
        return env;
    }

    /**
     * The variable {@code name} reads a secret for ({@code QUEEN_JDBC_PASSWORD} for {@code QUEEN_JDBC_PASSWORD_FILE}), or
     * null: as {@link ConfigLoader}, a password key the process declares or a {@code QUEEN_KAFKA_*} secret.
     */
    static String secretFileOf(Workload w, String name) {
        if (!name.endsWith("_FILE")) {
            return null;
        }
        String plain = name.substring(0, name.length() - "_FILE".length());
        boolean password = w.def().keys().stream().anyMatch(k -> k.type() == ConfigDef.Type.PASSWORD && k.env().equals(plain));
        boolean kafka = passesThroughToKafka(w, plain) && Secrets.isSecretSetting(kafkaKey(plain));
        return password || kafka ? plain : null;
    }

    /** As {@link ConfigLoader}: a {@code QUEEN_KAFKA_*} variable that is no declared key is a Kafka client setting. */
    static boolean passesThroughToKafka(Workload w, String name) {
        return name.startsWith("QUEEN_KAFKA_") && w.def().keys().stream().noneMatch(k -> k.env().equals(name) || (k.env() + "_FILE").equals(name));
    }

    /** {@code QUEEN_KAFKA_SSL_TRUSTSTORE_LOCATION} → {@code ssl.truststore.location}. */
    static String kafkaKey(String name) {
        return name.substring("QUEEN_KAFKA_".length()).toLowerCase(java.util.Locale.ROOT).replace('_', '.');
    }

    /** A file as the pod sees it: the mount over it, its volume, and the key of the Secret or ConfigMap it comes from. */
    record MountedFile(VolumeMount mount, Volume volume, String source, String key, boolean generated, String content) {
        boolean fromSecret() {
            return volume.getSecret() != null;
        }
    }

    /** The volume the container mounts {@code path} from (the deepest mount), or null. */
    static MountedFile mounted(Build b, Workload w, String path) {
        VolumeMount m = w.container().getVolumeMounts().stream().filter(x -> path.startsWith(x.getMountPath() + "/"))
                .max(java.util.Comparator.comparingInt(x -> x.getMountPath().length())).orElse(null);
        if (m == null) {
            return null;
        }
        Volume v = w.template().getSpec().getVolumes().stream().filter(x -> x.getName().equals(m.getName())).findFirst()
                .orElseThrow(() -> new AssertionError(w.name() + ": volumeMount " + m.getName() + " has no volume"));
        String key = path.substring(m.getMountPath().length() + 1);
        if (m.getSubPath() != null && !m.getSubPath().isEmpty()) {
            key = m.getSubPath() + "/" + key;
        }
        Map<String, String> data = null;
        String source;
        List<io.fabric8.kubernetes.api.model.KeyToPath> items = List.of();
        if (v.getSecret() != null) {
            source = "Secret " + v.getSecret().getSecretName();
            items = v.getSecret().getItems();
            Secret s = b.named(Secret.class, v.getSecret().getSecretName());
            if (s != null) {
                data = new LinkedHashMap<>();
                if (s.getData() != null) {
                    data.putAll(s.getData());
                }
                if (s.getStringData() != null) {
                    data.putAll(s.getStringData());
                }
            }
        } else if (v.getConfigMap() != null) {
            source = "ConfigMap " + v.getConfigMap().getName();
            items = v.getConfigMap().getItems();
            ConfigMap cm = b.named(ConfigMap.class, v.getConfigMap().getName());
            data = cm == null ? null : cm.getData();
        } else {
            source = (v.getEmptyDir() != null ? "emptyDir " : "volume ") + v.getName();
        }
        if (items != null && !items.isEmpty()) {   // only the listed keys, each at its path
            String at = key;
            key = items.stream().filter(i -> i.getPath().equals(at)).map(io.fabric8.kubernetes.api.model.KeyToPath::getKey).findFirst().orElse(at + " (not in items)");
        }
        return new MountedFile(m, v, source, key, data != null, data == null ? null : data.get(key));
    }

    /** The container's environment as the kubelet builds it: envFrom in order, then env, which wins. */
    static Map<String, Value> rawEnvironment(Build b, Workload w) {
        Map<String, Value> env = new LinkedHashMap<>();
        for (EnvFromSource f : w.container().getEnvFrom()) {
            if (f.getConfigMapRef() != null) {
                ConfigMap cm = b.named(ConfigMap.class, f.getConfigMapRef().getName());
                assertThat(cm).as("%s: envFrom ConfigMap %s exists", w.name(), f.getConfigMapRef().getName()).isNotNull();
                cm.getData().forEach((k, v) -> env.put(k, new Value(v, "ConfigMap " + cm.getMetadata().getName())));
            } else {
                fail(w.name() + ": envFrom a Secret: name each secret variable (env, secretKeyRef) so the manifest shows it");
            }
        }
        for (EnvVar e : w.container().getEnv()) {
            if (e.getValueFrom() == null) {
                env.put(e.getName(), new Value(e.getValue() == null ? "" : e.getValue(), "literal"));
            } else if (e.getValueFrom().getConfigMapKeyRef() != null) {
                var ref = e.getValueFrom().getConfigMapKeyRef();
                ConfigMap cm = b.named(ConfigMap.class, ref.getName());
                if (Boolean.TRUE.equals(ref.getOptional()) && cm != null && !cm.getData().containsKey(ref.getKey())) {
                    continue;   // not set there (commented at its default): the kubelet sets no variable, the default applies
                }
                assertThat(cm != null && cm.getData().containsKey(ref.getKey())).as("%s: %s from ConfigMap %s key %s", w.name(), e.getName(),
                        ref.getName(), ref.getKey()).isTrue();
                env.put(e.getName(), new Value(cm.getData().get(ref.getKey()), "ConfigMap " + ref.getName()));
            } else if (e.getValueFrom().getSecretKeyRef() != null) {
                var ref = e.getValueFrom().getSecretKeyRef();
                Secret s = b.named(Secret.class, ref.getName());
                boolean optional = Boolean.TRUE.equals(ref.getOptional());
                if (!b.hasSecrets()) {
                    env.put(e.getName(), new Value("", "Secret " + ref.getName()));   // the operator's; its value is not the manifest's
                } else if (s != null && s.getStringData().containsKey(ref.getKey())) {
                    env.put(e.getName(), new Value(s.getStringData().get(ref.getKey()), "Secret " + ref.getName()));
                } else {
                    assertThat(optional).as("%s: %s from Secret %s key %s, which the overlay does not generate", w.name(), e.getName(),
                            ref.getName(), ref.getKey()).isTrue();
                }
            } else {
                fail(w.name() + ": " + e.getName() + " comes from neither a value, a ConfigMap nor a Secret");
            }
        }
        return env;
    }

    /** The text of the process's --config file (from its mounted ConfigMap), or null without one. */
    static String configFile(Build b, Workload w) {
        List<String> args = w.container().getArgs();
        int i = args.indexOf("--config");
        if (i < 0) {
            return null;
        }
        String path = args.get(i + 1);
        MountedFile f = mounted(b, w, path);
        assertThat(f).as("%s: --config %s is on no mounted volume", w.name(), path).isNotNull();
        assertThat(f.volume().getConfigMap()).as("%s: --config comes from a ConfigMap", w.name()).isNotNull();
        assertThat(f.content()).as("%s: the ConfigMap holds %s", w.name(), path).isNotNull();
        return f.content();
    }

    static Properties properties(String text) throws IOException {
        Properties p = new Properties();
        if (text != null) {
            p.load(new StringReader(text));
        }
        return p;
    }

    /** The settings the process would run with: its --config file (from its mounted ConfigMap) and the environment. */
    static Config settings(Build b, Workload w, Map<String, Value> env, Path tmp) throws Exception {
        String text = configFile(b, w);
        Path file = text == null ? null : Files.writeString(tmp.resolve(w.name() + ".properties"), text);
        Map<String, String> raw = new LinkedHashMap<>();
        env.forEach((k, v) -> raw.put(k, v.text()));
        raw.remove(JVM_OPTIONS);
        return ConfigLoader.load(w.def(), file, raw);
    }

    static long heap(Workload w, Map<String, Value> env) {
        Value opts = env.get(JVM_OPTIONS);
        assertThat(opts).as("%s sets its heap (%s=-Xmx...): the limits below are sized from it", w.name(), JVM_OPTIONS).isNotNull();
        Matcher m = XMX.matcher(opts.text());
        assertThat(m.find()).as("%s: %s has -Xmx", w.name(), JVM_OPTIONS).isTrue();
        long n = Long.parseLong(m.group(1));
        return switch (Character.toLowerCase(m.group(2).charAt(0))) {
            case 'k' -> n << 10;
            case 'm' -> n << 20;
            default -> n << 30;
        };
    }

    // ---- the checks ------------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("builds")
    void theExpectedObjectsAreThere(Build b) {
        assertThat(b.all(Deployment.class)).extracting(d -> d.getMetadata().getName())
                .containsExactlyInAnyOrder("queen-timers-bridge", "queen-timers-sweeper", "queen-timers-http");
        assertThat(b.all(Job.class)).extracting(j -> j.getMetadata().getName()).containsExactly("queen-timers-migrate");
        assertThat(b.all(ServiceMonitor.class)).hasSize(1);
        assertThat(b.all(PrometheusRule.class)).hasSize(1);
        assertThat(b.all(NetworkPolicy.class)).extracting(p -> p.getMetadata().getName())
                .containsExactlyInAnyOrder("queen-timers-default-deny", "queen-timers-metrics", "queen-timers-api");
        assertThat(workloads(b)).extracting(Workload::process).containsExactlyInAnyOrder("bridge", "sweeper", "http", "migrate");
        if (b.hasSecrets()) {
            b.all(HasMetadata.class).forEach(o -> assertThat(o.getMetadata().getNamespace()).as("%s namespace", o.getMetadata().getName())
                    .isNotBlank());
        } else {
            assertThat(b.all(Secret.class)).as("base commits no Secret: no password has a committed value").isEmpty();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("builds")
    void everyVariableIsAKeyItsProcessDeclaresAndEveryValueParses(Build b, @TempDir Path tmp) throws Exception {
        for (Workload w : workloads(b)) {
            Map<String, Value> env = environment(b, w);
            Map<String, ConfigDef.Key> byEnv = w.def().keys().stream().collect(Collectors.toMap(ConfigDef.Key::env, k -> k));
            env.forEach((name, v) -> {
                if (passesThroughToKafka(w, name)) {
                    assertThat(w.def().key(CommonSettings.KAFKA_BOOTSTRAP)).as("%s: %s, but `queen-timers %s` uses no Kafka client", w.name(), name,
                            w.process()).isNotNull();
                } else if (!name.equals(JVM_OPTIONS)) {
                    assertThat(byEnv).as("%s (%s) sets %s from %s: not a key `queen-timers %s` declares (docs/configuration.md)", w.name(),
                            b, name, v.from(), w.process()).containsKey(name);
                    if (byEnv.get(name).type() == ConfigDef.Type.PASSWORD) {
                        assertThat(v.secret()).as("%s: %s is a secret, set from %s", w.name(), name, v.from()).isTrue();
                    }
                }
            });
            assertThat(env.get("QUEEN_JDBC_PASSWORD")).as("%s: its database password comes from a Secret", w.name())
                    .isNotNull().matches(Value::secret);
            for (ConfigDef.Key k : w.def().keys()) {
                if (k.required()) {
                    assertThat(env).as("%s sets the required %s", w.name(), k.env()).containsKey(k.env());
                }
            }
            Config c = settings(b, w, env, tmp);   // every value valid, as the process checks it at start
            long heap = heap(w, env);
            if (w.process().equals("bridge")) {
                RouteSettings.from(c).routes();
                AuditTopics.from(c);
                BridgeSettings.from(c).checkFitsHeap(heap);   // the bridge's own refusal, at the manifest's heap
            } else if (w.process().equals("sweeper")) {
                AuditTopics.from(c);
                SweeperSettings.from(c).checkFitsHeap(heap);
                // protection that is off as deployed protects nobody (docs/sweeper.md#the-fire-budget)
                assertThat(SweeperSettings.from(c).claim().tenantFiresPerSecond()).as("%s: the per-tenant fire budget is on", w.name()).isPositive();
            } else if (w.process().equals("http")) {
                HttpSettings http = HttpSettings.from(c);   // its own refusals at start: a tokenless topic beyond loopback, senders >= threads
                // the API as deployed: the operator reads and the console on, over HTTPS from a file of a mounted Secret
                assertThat(http.operator().readsEnabled()).as("%s: api.reads.enabled", w.name()).isTrue();
                assertThat(http.operator().consoleEnabled()).as("%s: api.console.enabled", w.name()).isTrue();
                assertThat(http.listen().tlsKeyStore()).as("%s: api.tls.keystore.file (HTTPS on api.port)", w.name()).isNotNull();
                MountedFile tls = mounted(b, w, http.listen().tlsKeyStore().toString());
                assertThat(tls != null && tls.fromSecret()).as("%s: the API's key and certificate, from a Secret volume", w.name()).isTrue();
                assertThat(tls.volume().getSecret().getOptional()).as("%s: no Secret, no start (never plain HTTP by accident)", w.name())
                        .isNotEqualTo(Boolean.TRUE);
            }
            var res = w.container().getResources();
            Quantity limit = res.getLimits().get("memory");
            assertThat(limit).as("%s: a memory limit", w.name()).isNotNull();
            assertThat(res.getRequests().get("memory")).as("%s: memory request = limit", w.name()).isEqualTo(limit);
            assertThat(Quantity.getAmountInBytes(limit).longValue() - heap).as("%s: the limit leaves the measured non-heap room", w.name())
                    .isGreaterThanOrEqualTo(w.process().equals("migrate") ? 64L << 20 : NON_HEAP_MEASURED);
        }
    }

    /** A file a setting names: the setting, the path, and whether the file is a secret (then only a Secret may hold it). */
    record NamedFile(String setting, String path, boolean secret) {}

    /** PostgreSQL's URL parameters that name a file (pgjdbc); sslkey is the client's private key. */
    static final Map<String, Boolean> JDBC_FILE_PARAMETERS = Map.of("sslrootcert", false, "sslcert", false, "sslkey", true);

    /**
     * Every file the workload's settings name, in its environment (before {@link #environment} reads the secret files) and
     * its --config file: the JDBC URL's sslrootcert, sslcert and sslkey; every {@code kafka.*ssl*.location} (a keystore
     * holds a private key: a secret); every {@code QUEEN_*_FILE}; every {@code *.file} key of the --config file.
     */
    static List<NamedFile> namedFiles(Build b, Workload w) throws IOException {
        Map<String, Value> env = rawEnvironment(b, w);
        Properties file = properties(configFile(b, w));
        List<NamedFile> out = new ArrayList<>();
        Value url = env.get(w.def().key(CommonSettings.JDBC_URL).env());
        jdbcParameters(url != null ? url.text() : file.getProperty(CommonSettings.JDBC_URL, "")).forEach((k, v) -> {
            if (JDBC_FILE_PARAMETERS.containsKey(k)) {
                out.add(new NamedFile("jdbc.url " + k, v, JDBC_FILE_PARAMETERS.get(k)));
            }
        });
        Map<String, String> kafka = new LinkedHashMap<>();
        file.stringPropertyNames().stream().filter(k -> k.startsWith(Config.KAFKA_PREFIX))
                .forEach(k -> kafka.put(k.substring(Config.KAFKA_PREFIX.length()), file.getProperty(k)));
        env.forEach((name, v) -> {
            if (passesThroughToKafka(w, name) && !name.endsWith("_FILE")) {
                kafka.put(kafkaKey(name), v.text());
            }
        });
        kafka.forEach((k, v) -> {
            if (k.contains("ssl") && k.endsWith(".location") && !v.isEmpty()) {
                out.add(new NamedFile("kafka." + k, v, k.contains("keystore") || Secrets.isSecretSetting(k)));
            }
        });
        env.forEach((name, v) -> {
            if (name.startsWith("QUEEN_") && name.endsWith("_FILE")) {
                // a keystore's file holds a private key (api.tls.keystore.file): a secret, whatever its variable
                out.add(new NamedFile(name, v.text(), secretFileOf(w, name) != null || name.contains("KEYSTORE")));
            }
        });
        file.stringPropertyNames().stream().filter(k -> k.endsWith(".file") && !file.getProperty(k).isEmpty())
                .forEach(k -> out.add(new NamedFile(k, file.getProperty(k), Secrets.isSecretSetting(k))));
        return out;
    }

    /** The query parameters of a JDBC URL ({@code ?a=b&c=d}), decoded. */
    static Map<String, String> jdbcParameters(String url) {
        Map<String, String> out = new LinkedHashMap<>();
        int q = url.indexOf('?');
        if (q >= 0) {
            for (String p : url.substring(q + 1).split("&")) {
                int eq = p.indexOf('=');
                out.put(eq < 0 ? p : p.substring(0, eq), eq < 0 ? "" : java.net.URLDecoder.decode(p.substring(eq + 1), java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    /**
     * Each workload mounts what its settings name: every file (the CA, a password or JAAS config read through
     * QUEEN_X_FILE, a keystore) is on a read-only Secret or ConfigMap volume of that workload, a secret one on a Secret,
     * and where the build generates the Secrets (the example) the key is there: else the process finds no file and
     * stops, or pgjdbc does not find its CA. And a verify-ca/verify-full URL names its CA: without sslrootcert pgjdbc
     * reads ~/.postgresql/root.crt, which the image does not have.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("builds")
    void everyFileTheSettingsNameIsOnAVolumeItsWorkloadMounts(Build b) throws Exception {
        List<String> problems = new ArrayList<>();
        for (Workload w : workloads(b)) {
            for (NamedFile f : namedFiles(b, w)) {
                String what = w.name() + ": " + f.setting() + " names " + f.path();
                MountedFile m = f.path().startsWith("/") ? mounted(b, w, f.path()) : null;
                if (!f.path().startsWith("/")) {
                    problems.add(what + ", not an absolute path");
                } else if (m == null) {
                    problems.add(what + ", on no volume the container mounts (" + w.container().getVolumeMounts().stream()
                            .map(VolumeMount::getMountPath).toList() + ")");
                } else if (m.volume().getSecret() == null && m.volume().getConfigMap() == null) {
                    problems.add(what + ", on " + m.source() + ": nothing puts the file there");
                } else {
                    if (!Boolean.TRUE.equals(m.mount().getReadOnly())) {
                        problems.add(what + ": mount " + m.mount().getMountPath() + " is not read-only");
                    }
                    if (f.secret() && !m.fromSecret()) {
                        problems.add(what + ", a secret, from " + m.source() + " (a ConfigMap is no place for a secret)");
                    }
                    if (b.hasSecrets() && m.content() == null) {
                        problems.add(what + ": " + m.source() + " has no key " + m.key()
                                + (m.generated() ? "" : " (this build generates no such object)"));
                    }
                }
            }
            String sslmode = jdbcParameters(environment(b, w).get("QUEEN_JDBC_URL").text()).get("sslmode");
            if (("verify-ca".equals(sslmode) || "verify-full".equals(sslmode))
                    && !jdbcParameters(environment(b, w).get("QUEEN_JDBC_URL").text()).containsKey("sslrootcert")) {
                problems.add(w.name() + ": jdbc.url has sslmode=" + sslmode + " and no sslrootcert: pgjdbc then reads ~/.postgresql/root.crt,"
                        + " which the image does not have");
            }
        }
        assertThat(problems).isEmpty();
    }

    /**
     * The example as shipped encrypts every connection and checks the server: PostgreSQL verify-full against the mounted
     * CA, Kafka over SASL_SSL with the CA as a PEM truststore (bridge and sweeper: the consumers, the audit relay, the
     * admin clients of readiness), each password and the JAAS config read from a file of the workload's own Secret.
     * docs/security.md#encrypted-transport; TlsEndToEndIT runs the processes with these settings.
     */
    @Test
    void theExampleEncryptsEveryConnectionAndChecksTheServer(@TempDir Path tmp) throws Exception {
        Build b = builds().skip(1).findFirst().orElseThrow();
        for (Workload w : workloads(b)) {
            Map<String, Value> env = environment(b, w);
            Config c = settings(b, w, env, tmp);
            Map<String, String> jdbc = jdbcParameters(c.string(CommonSettings.JDBC_URL));
            assertThat(jdbc.get("sslmode")).as("%s: jdbc.url sslmode", w.name()).isEqualTo("verify-full");
            assertThat(jdbc.get("sslrootcert")).as("%s: jdbc.url sslrootcert", w.name()).isNotBlank();
            assertThat(env.get("QUEEN_JDBC_PASSWORD").from()).as("%s: the database password, from a file of a Secret", w.name())
                    .startsWith("Secret ").contains("(file ");
            if (w.def().key(CommonSettings.KAFKA_BOOTSTRAP) == null) {
                assertThat(w.process()).as("only migrate connects to PostgreSQL alone").isEqualTo("migrate");
                continue;
            }
            Map<String, Object> kafka = c.kafka();
            assertThat(kafka.get("security.protocol")).as("%s: kafka.security.protocol", w.name()).isEqualTo("SASL_SSL");
            assertThat(kafka.get("ssl.truststore.type")).as("%s: kafka.ssl.truststore.type", w.name()).isEqualTo("PEM");
            assertThat(kafka.get("ssl.truststore.location")).as("%s: the CA is the brokers' truststore", w.name()).isEqualTo(jdbc.get("sslrootcert"));
            assertThat(env.get("QUEEN_KAFKA_SASL_JAAS_CONFIG")).as("%s: kafka.sasl.jaas.config", w.name()).isNotNull();
            assertThat(env.get("QUEEN_KAFKA_SASL_JAAS_CONFIG").from()).as("%s: the JAAS config, from a file of a Secret", w.name())
                    .startsWith("Secret ").contains("(file ");
        }
    }

    /** A value that is a secret whatever its variable is called: a JAAS login module, a PEM private key, a password. */
    static final Pattern SECRET_TEXT = Pattern.compile("LoginModule|PRIVATE KEY-----|(?i)password\\s*[=:]");

    /**
     * No secret in an environment variable: {@code /proc/<pid>/environ}, {@code kubectl describe pod}, a crash report and
     * every process started in the container show the environment. Every secret a workload's process reads (a password
     * key it declares: the database password, the payload encryption keys; a Kafka setting {@link Secrets} calls secret:
     * a JAAS config) is a file of a Secret volume named by its {@code QUEEN_<KEY>_FILE} variable. So no variable takes its
     * value from a Secret (secretKeyRef, envFrom a Secret), no variable of a secret key is set with a value of its own
     * (literal or from a ConfigMap), and no value (JAVA_TOOL_OPTIONS and the ConfigMaps' too) holds a JAAS login module,
     * a private key or a password.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("builds")
    void noSecretIsInAnEnvironmentVariable(Build b) {
        List<String> problems = new ArrayList<>();
        for (Workload w : workloads(b)) {
            Map<String, String> values = new LinkedHashMap<>();   // variable -> where its value comes from
            Map<String, String> texts = new LinkedHashMap<>();
            for (EnvFromSource f : w.container().getEnvFrom()) {
                if (f.getSecretRef() != null) {
                    problems.add(w.name() + ": envFrom Secret " + f.getSecretRef().getName() + " makes each of its keys a variable");
                } else if (f.getConfigMapRef() != null && b.named(ConfigMap.class, f.getConfigMapRef().getName()) != null) {
                    b.named(ConfigMap.class, f.getConfigMapRef().getName()).getData().forEach((k, v) -> {
                        values.put(k, "ConfigMap " + f.getConfigMapRef().getName());
                        texts.put(k, v);
                    });
                }
            }
            for (EnvVar e : w.container().getEnv()) {
                if (e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null) {
                    var ref = e.getValueFrom().getSecretKeyRef();
                    problems.add(w.name() + ": " + e.getName() + " from Secret " + ref.getName() + " key " + ref.getKey()
                            + ": a variable; mount the Secret and name the file in " + e.getName() + "_FILE");
                    values.remove(e.getName());
                } else if (e.getValueFrom() != null && e.getValueFrom().getConfigMapKeyRef() != null) {
                    var ref = e.getValueFrom().getConfigMapKeyRef();
                    ConfigMap cm = b.named(ConfigMap.class, ref.getName());
                    values.put(e.getName(), "ConfigMap " + ref.getName());
                    texts.put(e.getName(), cm == null ? "" : cm.getData().getOrDefault(ref.getKey(), ""));
                } else {
                    values.put(e.getName(), "a literal value");
                    texts.put(e.getName(), e.getValue() == null ? "" : e.getValue());
                }
            }
            values.forEach((name, from) -> {
                if (secretVariable(w, name)) {
                    problems.add(w.name() + ": " + name + " (" + from + ") is a secret in the environment: put it in the workload's"
                            + " Secret and set " + name + "_FILE to its file");
                }
            });
            texts.forEach((name, text) -> {
                if (SECRET_TEXT.matcher(text).find()) {
                    problems.add(w.name() + ": " + name + " (" + values.get(name) + ") holds a JAAS config, a private key or a password");
                }
            });
        }
        assertThat(problems).isEmpty();
    }

    /** A variable that carries a secret itself (not its file): a password key of the process, or a Kafka secret setting. */
    static boolean secretVariable(Workload w, String name) {
        boolean password = w.def().keys().stream().anyMatch(k -> k.type() == ConfigDef.Type.PASSWORD && k.env().equals(name));
        return password || passesThroughToKafka(w, name) && !name.endsWith("_FILE") && Secrets.isSecretSetting(kafkaKey(name));
    }

    /**
     * Who may connect to the pods (base/networkpolicy.yaml): every workload is selected by an ingress policy (so what no
     * policy admits is refused), every container port is admitted by a rule of a policy that selects its pod, and nothing
     * else is open: each rule names its ports, each a port a selected container serves, and its peers, each a namespace
     * AND its pods by label (no ipBlock, no empty selector, which would admit every namespace or pod); the metrics and
     * health port ({@code http.port}) only from Prometheus pods. No pod uses the host's network or a host port, and no
     * Service is a NodePort or LoadBalancer: those reach a pod around its policies on many network plugins.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("builds")
    void everyPortIsAdmittedByANetworkPolicyFromItsCallersOnlyAndNothingElseIsOpen(Build b) {
        List<String> problems = new ArrayList<>();
        List<NetworkPolicy> policies = b.all(NetworkPolicy.class);
        for (NetworkPolicy p : policies) {
            String name = "NetworkPolicy " + p.getMetadata().getName();
            if (p.getSpec().getPolicyTypes() == null || !p.getSpec().getPolicyTypes().contains("Ingress")) {
                problems.add(name + ": policyTypes without Ingress");
            }
            if (empty(p.getSpec().getPodSelector())) {
                problems.add(name + ": an empty podSelector selects every pod of the namespace, not queen-timers'");
            }
            for (NetworkPolicyIngressRule rule : ingress(p)) {
                if (rule.getFrom() == null || rule.getFrom().isEmpty()) {
                    problems.add(name + ": a rule without from admits every source");
                }
                if (rule.getPorts() == null || rule.getPorts().isEmpty()) {
                    problems.add(name + ": a rule without ports admits every port");
                }
                for (NetworkPolicyPort rp : rule.getPorts() == null ? List.<NetworkPolicyPort>of() : rule.getPorts()) {
                    if (rp.getPort() == null || rp.getEndPort() != null) {
                        problems.add(name + ": a port " + (rp.getPort() == null ? "left out admits every port" : "range admits ports")
                                + " of " + (rp.getProtocol() == null ? "TCP" : rp.getProtocol()) + " that nothing serves");
                    }
                }
                for (NetworkPolicyPeer peer : rule.getFrom() == null ? List.<NetworkPolicyPeer>of() : rule.getFrom()) {
                    if (peer.getIpBlock() != null || empty(peer.getNamespaceSelector()) || empty(peer.getPodSelector())) {
                        problems.add(name + ": a peer that is not one namespace's pods by label (an ipBlock, or a missing or empty"
                                + " selector): " + peer);
                    }
                }
            }
        }
        for (Workload w : workloads(b)) {
            Map<String, String> labels = w.template().getMetadata().getLabels();
            var pod = w.template().getSpec();
            if (Boolean.TRUE.equals(pod.getHostNetwork())) {
                problems.add(w.name() + ": hostNetwork: the node's ports, which no NetworkPolicy guards");
            }
            List<NetworkPolicy> selecting = policies.stream().filter(p -> selects(p.getSpec().getPodSelector(), labels)).toList();
            if (selecting.stream().noneMatch(p -> p.getSpec().getPolicyTypes() != null && p.getSpec().getPolicyTypes().contains("Ingress"))) {
                problems.add(w.name() + ": no ingress policy selects its pods, so every connection is admitted");
            }
            List<ContainerPort> ports = w.container().getPorts() == null ? List.of() : w.container().getPorts();
            for (ContainerPort port : ports) {
                if (port.getHostPort() != null) {
                    problems.add(w.name() + ": hostPort " + port.getHostPort() + ": the node's port, which no NetworkPolicy guards");
                }
                List<NetworkPolicyPeer> admitted = new ArrayList<>();
                for (NetworkPolicy p : selecting) {
                    for (NetworkPolicyIngressRule rule : ingress(p)) {
                        if (rule.getPorts() != null && rule.getPorts().stream().anyMatch(rp -> names(rp, port))) {
                            admitted.addAll(rule.getFrom() == null ? List.of() : rule.getFrom());
                        }
                    }
                }
                if (admitted.isEmpty()) {
                    problems.add(w.name() + ": container port " + port.getName() + " (" + port.getContainerPort() + ") is admitted by no"
                            + " policy: its callers cannot reach it");
                }
                if ("http".equals(port.getName())) {   // http.port: /metrics and /health (portsProbesServices... checks it)
                    admitted.stream().filter(peer -> peer.getPodSelector() == null || peer.getPodSelector().getMatchLabels() == null
                                    || !"prometheus".equals(peer.getPodSelector().getMatchLabels().get("app.kubernetes.io/name")))
                            .forEach(peer -> problems.add(w.name() + ": the metrics and health port " + port.getName()
                                    + " admits a peer other than Prometheus' pods: " + peer));
                }
            }
            // each port a selecting rule names is one this container serves: no rule opens a port nothing was meant to answer on
            for (NetworkPolicy p : selecting) {
                for (NetworkPolicyIngressRule rule : ingress(p)) {
                    for (NetworkPolicyPort rp : rule.getPorts() == null ? List.<NetworkPolicyPort>of() : rule.getPorts()) {
                        if (ports.stream().noneMatch(port -> names(rp, port))) {
                            problems.add("NetworkPolicy " + p.getMetadata().getName() + " admits port " + rp.getPort() + " to " + w.name()
                                    + ", which serves no such port");
                        }
                    }
                }
            }
        }
        for (Service s : b.all(Service.class)) {
            String type = s.getSpec().getType();
            if (type != null && !type.equals("ClusterIP")) {
                problems.add("Service " + s.getMetadata().getName() + " is a " + type + ": reachable from outside the cluster");
            }
        }
        assertThat(problems).isEmpty();
    }

    static boolean empty(LabelSelector s) {
        return s == null || (s.getMatchLabels() == null || s.getMatchLabels().isEmpty())
                && (s.getMatchExpressions() == null || s.getMatchExpressions().isEmpty());
    }

    /** Whether {@code selector} selects a pod labelled {@code labels}: every matchLabels pair and every expression holds. */
    static boolean selects(LabelSelector selector, Map<String, String> labels) {
        if (selector.getMatchLabels() != null && !labels.entrySet().containsAll(selector.getMatchLabels().entrySet())) {
            return false;
        }
        for (var e : selector.getMatchExpressions() == null ? List.<io.fabric8.kubernetes.api.model.LabelSelectorRequirement>of()
                : selector.getMatchExpressions()) {
            String v = labels.get(e.getKey());
            boolean holds = switch (e.getOperator()) {
                case "In" -> v != null && e.getValues().contains(v);
                case "NotIn" -> v == null || !e.getValues().contains(v);
                case "Exists" -> v != null;
                case "DoesNotExist" -> v == null;
                default -> throw new AssertionError("label selector operator " + e.getOperator());
            };
            if (!holds) {
                return false;
            }
        }
        return true;
    }

    static List<NetworkPolicyIngressRule> ingress(NetworkPolicy p) {
        return p.getSpec().getIngress() == null ? List.of() : p.getSpec().getIngress();
    }

    /**
     * Whether a policy's port is this container port: by name or by number, with the same protocol (TCP when left out).
     * A port left out or a range is every port or several (refused above), so it names this one too.
     */
    static boolean names(NetworkPolicyPort rp, ContainerPort port) {
        String protocol = rp.getProtocol() == null ? "TCP" : rp.getProtocol();
        if (!protocol.equals(port.getProtocol() == null ? "TCP" : port.getProtocol())) {
            return false;
        }
        if (rp.getPort() == null) {
            return true;
        }
        if (rp.getPort().getStrVal() != null) {
            return rp.getPort().getStrVal().equals(port.getName());
        }
        int from = rp.getPort().getIntVal();
        return port.getContainerPort() >= from && port.getContainerPort() <= (rp.getEndPort() == null ? from : rp.getEndPort());
    }

    /**
     * A ConfigMap is readable by whoever may read the namespace's ConfigMaps, and shows in `kubectl describe`: none holds
     * a password, a JAAS config or a private key, judged by the key's name (a password setting of any process, a Kafka
     * setting that {@link Secrets} masks, a file named like a key or keystore; also each key of a properties file in it)
     * and, for what a name does not say, by a JAAS login module or a PEM private key in a value. A path to a secret
     * ({@code QUEEN_X_FILE}) is not one.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("builds")
    void noConfigMapHoldsAPasswordAJaasConfigOrAKey(Build b) throws Exception {
        List<Workload> workloads = workloads(b);
        Set<String> passwordVariables = workloads.stream().flatMap(w -> w.def().keys().stream()).filter(k -> k.type() == ConfigDef.Type.PASSWORD)
                .map(ConfigDef.Key::env).collect(Collectors.toSet());
        Set<String> passwordKeys = workloads.stream().flatMap(w -> w.def().keys().stream()).filter(k -> k.type() == ConfigDef.Type.PASSWORD)
                .map(ConfigDef.Key::name).collect(Collectors.toSet());
        List<String> problems = new ArrayList<>();
        for (ConfigMap cm : b.all(ConfigMap.class)) {
            String where = "ConfigMap " + cm.getMetadata().getName();
            for (Map.Entry<String, String> e : (cm.getData() == null ? Map.<String, String>of() : cm.getData()).entrySet()) {
                String key = e.getKey();
                if (key.startsWith("QUEEN_")) {
                    if (!key.endsWith("_FILE") && (passwordVariables.contains(key) || key.startsWith("QUEEN_KAFKA_") && Secrets.isSecretSetting(kafkaKey(key)))) {
                        problems.add(where + " sets " + key + ", a secret");
                    }
                } else if (key.endsWith(".properties")) {
                    Properties p = properties(e.getValue());
                    p.stringPropertyNames().stream().filter(k -> passwordKeys.contains(k) || k.startsWith(Config.KAFKA_PREFIX)
                            && !k.endsWith(".location") && Secrets.isSecretSetting(k.substring(Config.KAFKA_PREFIX.length())))
                            .forEach(k -> problems.add(where + ": " + key + " sets " + k + ", a secret"));
                } else if (Secrets.isSecretSetting(key) || key.matches("(?i).*(keystore|\\.jks|\\.p12|\\.pfx|\\.key)$")) {
                    problems.add(where + " holds " + key + ", by its name a key or a keystore");
                }
                String value = e.getValue() == null ? "" : e.getValue();
                if (value.contains("LoginModule")) {
                    problems.add(where + ": " + key + " holds a JAAS config (a LoginModule)");
                }
                if (value.contains("PRIVATE KEY-----")) {
                    problems.add(where + ": " + key + " holds a PEM private key");
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    /** As docker-compose.yml (ComposeFileTest): the owner only migrates; each service a login of its own role, checked. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("builds")
    void theOwnerMigratesAndEachServiceRunsAsItsOwnLeastPrivilegeLogin(Build b) {
        Map<String, Map<String, Value>> env = new LinkedHashMap<>();
        workloads(b).forEach(w -> env.put(w.process(), environment(b, w)));
        List<String> users = Stream.of("bridge", "sweeper", "http", "migrate").map(p -> env.get(p).get("QUEEN_JDBC_USER").text()).toList();
        assertThat(Set.copyOf(users)).as("four logins: %s", users).hasSize(4).doesNotContain("postgres");
        assertThat(Stream.of("bridge", "sweeper", "http", "migrate").map(p -> env.get(p).get("QUEEN_JDBC_PASSWORD").from()).distinct())
                .as("one Secret per login").hasSize(4);
        // the API's reads connect as the operator login compose's init script makes a member of queen_operator
        assertThat(env.get("http").get("QUEEN_JDBC_USER").text()).isEqualTo(ComposeFileTest.composeDefault("QUEEN_OPERATOR_JDBC_USER"));
        // the API writes to the topics the bridge reads, with the bridge's tenants: the same ConfigMap, not a copy
        for (String key : List.of("QUEEN_COMMAND_TOPICS", "QUEEN_COMMAND_TOPIC_TENANTS", "QUEEN_AUTH_ADMIN_CLAIM")) {
            assertThat(env.get("http").get(key)).as("http %s", key).isEqualTo(env.get("bridge").get(key));
        }
        // issue 47: migrate binds the bridge group to the bridge's own login, with the topics the bridge reads (V135)
        assertThat(env.get("migrate").get("QUEEN_BRIDGE_LOGIN").text()).isEqualTo(env.get("bridge").get("QUEEN_JDBC_USER").text());
        assertThat(env.get("migrate").get("QUEEN_COMMAND_TOPICS").text()).isEqualTo(env.get("bridge").get("QUEEN_COMMAND_TOPICS").text());
        for (String p : List.of("bridge", "sweeper", "http")) {
            assertThat(env.get(p)).as(p + " keeps db.role.check on").doesNotContainKey("QUEEN_DB_ROLE_CHECK");
            assertThat(env.get(p).get("QUEEN_MIGRATE_ON_START").text()).as(p).isEqualTo("false");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("builds")
    void portsProbesServicesAndTheServiceMonitorMatchWhatTheServicesServe(Build b, @TempDir Path tmp) throws Exception {
        JsonNode prometheus = ObservabilityKit.yaml(ObservabilityKit.PROMETHEUS);
        List<String> composeJobs = new ArrayList<>();
        prometheus.get("scrape_configs").forEach(j -> {
            composeJobs.add(j.get("job_name").asText());
            assertThat(j.get("metrics_path").asText()).isEqualTo(OpsServer.METRICS_PATH);
        });
        ServiceMonitor sm = b.all(ServiceMonitor.class).get(0);
        List<String> scraped = new ArrayList<>();
        for (Workload w : workloads(b)) {
            if (w.process().equals("migrate")) {
                continue;
            }
            Config c = settings(b, w, environment(b, w), tmp);
            int port = c.intValue(CommonSettings.HTTP_PORT);
            assertThat(InetAddress.getByName(c.string(CommonSettings.HTTP_BIND_ADDRESS)).isLoopbackAddress())
                    .as("%s: http.bind.address must let the kubelet and Prometheus in", w.name()).isFalse();
            // the ops port (http.port) on every service; the http API also its own (api.port), nothing else
            Map<String, Integer> served = new LinkedHashMap<>(Map.of("http.port", port));
            if (w.process().equals("http")) {
                served.put("api.port", c.intValue(HttpSettings.PORT));
            }
            var ports = w.container().getPorts();
            assertThat(ports).extracting(ContainerPort::getContainerPort).as("%s container ports: %s", w.name(), served)
                    .containsExactlyInAnyOrderElementsOf(served.values());
            ContainerPort ops = ports.stream().filter(x -> x.getContainerPort() == port).findFirst().orElseThrow();
            String portName = ops.getName();
            probe(w, "startup", w.container().getStartupProbe(), OpsServer.LIVE_PATH, portName, port);
            probe(w, "liveness", w.container().getLivenessProbe(), OpsServer.LIVE_PATH, portName, port);
            probe(w, "readiness", w.container().getReadinessProbe(), OpsServer.READY_PATH, portName, port);

            Map<String, String> podLabels = w.template().getMetadata().getLabels();
            List<Service> selecting = b.all(Service.class).stream().filter(s -> podLabels.entrySet().containsAll(s.getSpec().getSelector().entrySet()))
                    .toList();
            List<Service> services = selecting.stream().filter(s -> s.getSpec().getPorts().stream()
                    .anyMatch(sp -> sp.getTargetPort().equals(new IntOrString(portName)) || sp.getTargetPort().equals(new IntOrString(port)))).toList();
            assertThat(services).as("%s: one Service selects its pods on the ops port", w.name()).hasSize(1);
            if (w.process().equals("http")) {
                // the API's callers: one Service to api.port, of ready pods only, and not a job of the ServiceMonitor
                ContainerPort api = ports.stream().filter(x -> x.getContainerPort().equals(served.get("api.port"))).findFirst().orElseThrow();
                List<Service> apis = selecting.stream().filter(s -> !services.contains(s)).toList();
                assertThat(apis).as("%s: one Service for the API's callers", w.name()).hasSize(1);
                Service a = apis.get(0);
                assertThat(a.getSpec().getPorts()).singleElement().satisfies(sp -> assertThat(sp.getTargetPort())
                        .isIn(new IntOrString(api.getName()), new IntOrString(api.getContainerPort())));
                assertThat(a.getSpec().getPublishNotReadyAddresses()).as("the API Service sends callers to ready pods only").isNotEqualTo(Boolean.TRUE);
                assertThat(a.getSpec().getClusterIP()).as("the API Service balances over its pods").isNotEqualTo("None");
                Map<String, String> apiLabels = a.getMetadata().getLabels();
                boolean monitored = apiLabels.entrySet().containsAll(sm.getSpec().getSelector().getMatchLabels().entrySet())
                        && sm.getSpec().getSelector().getMatchExpressions().stream().allMatch(e -> e.getValues().contains(apiLabels.get(e.getKey())));
                assertThat(monitored).as("the ServiceMonitor scrapes Service %s, the API's port", a.getMetadata().getName()).isFalse();
            } else {
                assertThat(selecting).as("%s: one Service selects its pods", w.name()).hasSize(1);
            }
            Service s = services.get(0);
            assertThat(s.getSpec().getPublishNotReadyAddresses()).as("%s: a not-ready pod is still scraped (QueenTimersNotReady)", w.name())
                    .isTrue();
            assertThat(s.getSpec().getPorts()).hasSize(1);
            assertThat(s.getSpec().getPorts().get(0).getTargetPort()).isIn(new IntOrString(portName), new IntOrString(port));
            String servicePort = s.getSpec().getPorts().get(0).getName();

            Map<String, String> serviceLabels = s.getMetadata().getLabels();
            assertThat(serviceLabels.entrySet()).as("ServiceMonitor selects Service %s", s.getMetadata().getName())
                    .containsAll(sm.getSpec().getSelector().getMatchLabels().entrySet());
            sm.getSpec().getSelector().getMatchExpressions().forEach(e -> {
                assertThat(e.getOperator()).isEqualTo("In");
                assertThat(e.getValues()).as("ServiceMonitor selects Service %s", s.getMetadata().getName()).contains(serviceLabels.get(e.getKey()));
            });
            scraped.add(s.getMetadata().getName());   // the job label: the Service's name (no jobLabel set)
            assertThat(sm.getSpec().getEndpoints()).hasSize(1);
            assertThat(sm.getSpec().getEndpoints().get(0).getPort()).isEqualTo(servicePort);
            assertThat(sm.getSpec().getEndpoints().get(0).getPath()).isEqualTo(OpsServer.METRICS_PATH);
        }
        assertThat(sm.getSpec().getJobLabel()).isNull();
        assertThat(scraped).as("the Prometheus jobs are the compose kit's (the alert rules match them)").containsExactlyInAnyOrderElementsOf(composeJobs);
    }

    private static void probe(Workload w, String which, Probe p, String path, String portName, int port) {
        assertThat(p).as("%s: %s probe", w.name(), which).isNotNull();
        assertThat(p.getHttpGet().getPath()).as("%s: %s probe path", w.name(), which).isEqualTo(path);
        assertThat(p.getHttpGet().getPort()).as("%s: %s probe port", w.name(), which).isIn(new IntOrString(portName), new IntOrString(port));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("builds")
    void everyPodRunsAsTheImagesUserOnAReadOnlyRootAndEachDeploymentHasADisruptionBudget(Build b) {
        Matcher uid = Pattern.compile("--uid (\\d+)").matcher(KustomizeBuild.read(ComposeFileTest.DOCKER.resolve("Dockerfile")));
        assertThat(uid.find()).isTrue();
        long imageUser = Long.parseLong(uid.group(1));
        for (Workload w : workloads(b)) {
            var pod = w.template().getSpec();
            assertThat(pod.getSecurityContext().getRunAsNonRoot()).as(w.name()).isTrue();
            assertThat(pod.getSecurityContext().getRunAsUser()).as("%s runs as the Dockerfile's user", w.name()).isEqualTo(imageUser);
            assertThat(pod.getAutomountServiceAccountToken()).as("%s needs no API token", w.name()).isFalse();
            var sc = w.container().getSecurityContext();
            assertThat(sc.getReadOnlyRootFilesystem()).as(w.name()).isTrue();
            assertThat(sc.getAllowPrivilegeEscalation()).as(w.name()).isFalse();
            assertThat(sc.getCapabilities().getDrop()).as(w.name()).containsExactly("ALL");
            VolumeMount tmp = w.container().getVolumeMounts().stream().filter(m -> m.getMountPath().equals("/tmp")).findFirst()
                    .orElseThrow(() -> new AssertionError(w.name() + ": a writable /tmp (JVM, zstd-jni) on the read-only root"));
            assertThat(pod.getVolumes()).filteredOn(v -> v.getName().equals(tmp.getName())).singleElement()
                    .satisfies(v -> assertThat(v.getEmptyDir()).isNotNull());
        }
        for (Deployment d : b.all(Deployment.class)) {
            Map<String, String> labels = d.getSpec().getTemplate().getMetadata().getLabels();
            List<PodDisruptionBudget> pdbs = b.all(PodDisruptionBudget.class).stream()
                    .filter(p -> labels.entrySet().containsAll(p.getSpec().getSelector().getMatchLabels().entrySet())).toList();
            assertThat(pdbs).as("%s: one PodDisruptionBudget", d.getMetadata().getName()).hasSize(1);
            var spec = pdbs.get(0).getSpec();
            if (spec.getMinAvailable() != null) {
                assertThat(spec.getMinAvailable().getIntVal()).as("a minAvailable at the replica count blocks every drain")
                        .isLessThan(d.getSpec().getReplicas());
            } else {
                assertThat(spec.getMaxUnavailable().getIntVal()).isPositive();
            }
            assertThat(d.getSpec().getReplicas()).as("%s: a drain leaves one running", d.getMetadata().getName()).isGreaterThanOrEqualTo(2);
        }
        Job migrate = b.all(Job.class).get(0);
        assertThat(migrate.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs()).containsExactly("migrate");
        assertThat(migrate.getSpec().getTemplate().getSpec().getRestartPolicy()).isEqualTo("OnFailure");
        assertThat(migrate.getSpec().getBackoffLimit()).as("retried while the database starts").isPositive();
    }

    /**
     * ConfigMap/Secret for every key, without pinning defaults: each key a process declares is, exactly once, a variable
     * set in one of its ConfigMaps, a commented line {@code # QUEEN_X: "<default>"   # <what it is>} there (shown at
     * its current default, not set, so a future default still applies), or a file of a Secret (a password key: only
     * that, named by its {@code _FILE} variable). A commented default
     * must be the key's default today: when a default changes, this fails and the comment is updated. On failure the
     * expected lines, in the settings definitions' order, are in cli/target/configmap-keys.yaml.
     */
    @Test
    void everyKeyOfEveryProcessIsSetCommentedAtItsDefaultOrASecretExactlyOnce() throws Exception {
        Build b = builds().findFirst().orElseThrow();   // base: the commented lines are base/configmap.yaml's
        Map<String, Map<String, String>> commented = commentedKeys(K8S.resolve("base/configmap.yaml"));
        List<String> problems = new ArrayList<>();
        Map<String, Map<String, String>> expected = new LinkedHashMap<>();   // ConfigMap -> variable -> its line
        List<Workload> workloads = workloads(b);
        for (Workload w : workloads) {
            Map<String, ConfigDef.Key> byEnv = w.def().keys().stream().collect(Collectors.toMap(ConfigDef.Key::env, k -> k));
            Map<String, List<String>> where = new LinkedHashMap<>();
            Map<String, String> commentedHere = new LinkedHashMap<>();
            List<String> envFrom = new ArrayList<>();
            for (EnvFromSource f : w.container().getEnvFrom()) {
                String cm = f.getConfigMapRef().getName();
                envFrom.add(cm);
                b.named(ConfigMap.class, cm).getData().forEach((v, value) -> {
                    String plain = secretFileOf(w, v);
                    where.computeIfAbsent(plain == null ? v : plain, x -> new ArrayList<>()).add(plain == null ? cm : fileSource(b, w, value));
                });
                commented.getOrDefault(cm, Map.of()).forEach((v, dflt) -> {
                    where.computeIfAbsent(v, x -> new ArrayList<>()).add(cm + " (commented)");
                    commentedHere.put(v, dflt);
                });
            }
            for (EnvVar e : w.container().getEnv()) {
                String from = e.getValueFrom() == null ? "env value"
                        : e.getValueFrom().getSecretKeyRef() != null ? "Secret " + e.getValueFrom().getSecretKeyRef().getName()
                        : "ConfigMap " + e.getValueFrom().getConfigMapKeyRef().getName();
                String plain = secretFileOf(w, e.getName());
                if (plain != null && e.getValueFrom() == null) {   // QUEEN_X_FILE: the secret X, from the volume mounted there
                    where.computeIfAbsent(plain, x -> new ArrayList<>()).add(fileSource(b, w, e.getValue()));
                } else if (!e.getName().equals(JVM_OPTIONS)) {
                    where.computeIfAbsent(e.getName(), x -> new ArrayList<>()).add(from);
                }
            }
            where.keySet().stream().filter(v -> !byEnv.containsKey(v) && !passesThroughToKafka(w, v))
                    .forEach(v -> problems.add(w.name() + ": " + v + " (" + where.get(v) + ") is not a key `queen-timers " + w.process() + "` declares"));
            Map<String, String> required = new LinkedHashMap<>();
            w.def().keys().stream().filter(ConfigDef.Key::required).forEach(k -> required.put(k.env(), "x"));
            Config defaults = load(w, required);
            for (ConfigDef.Key k : w.def().keys()) {
                List<String> places = where.getOrDefault(k.env(), List.of());
                String dflt = defaultText(w, k, defaults, required);
                if (k.type() == ConfigDef.Type.PASSWORD) {
                    if (places.size() != 1 || !places.get(0).startsWith("Secret ") || !places.get(0).endsWith("(file)")) {
                        problems.add(w.name() + ": " + k.env() + " is a secret: once, a file of the workload's Secret volume named by "
                                + k.env() + "_FILE (never a variable: noSecretIsInAnEnvironmentVariable), appears in " + places);
                    }
                    continue;
                }
                if (places.size() != 1) {
                    problems.add(w.name() + ": " + k.env() + " should appear once (set, commented or a Secret file), appears in " + places);
                } else if (places.get(0).startsWith("Secret ")) {
                    continue;
                } else if (commentedHere.containsKey(k.env()) && !commentedHere.get(k.env()).equals(dflt)) {
                    problems.add(w.name() + ": " + k.env() + " is commented at \"" + commentedHere.get(k.env()) + "\", its default is now \"" + dflt + "\"");
                }
                // where the expected line goes: where it is now; else the shared ConfigMap if every process reading it declares the key
                String cm = places.stream().filter(p -> !p.startsWith("Secret ") && !p.startsWith("env "))
                        .map(p -> p.replace(" (commented)", "").replace("ConfigMap ", "")).findFirst().orElse(null);
                if (cm == null && envFrom.isEmpty()) {
                    problems.add(w.name() + ": reads no ConfigMap whole (envFrom), so " + k.env() + " has nowhere to be shown");
                    continue;
                }
                if (cm == null) {
                    String shared = envFrom.get(0);
                    boolean everyReaderDeclares = workloads.stream().filter(o -> o.container().getEnvFrom().stream()
                            .anyMatch(f -> f.getConfigMapRef().getName().equals(shared))).allMatch(o -> o.def().key(k.name()) != null);
                    cm = everyReaderDeclares ? shared : envFrom.get(envFrom.size() - 1);
                }
                String set = b.named(ConfigMap.class, cm) == null ? null : b.named(ConfigMap.class, cm).getData().get(k.env());
                expected.computeIfAbsent(cm, x -> new LinkedHashMap<>()).putIfAbsent(k.env(), set != null
                        ? k.env() + ": " + JSON.writeValueAsString(set) + "   # set"
                        : "# " + k.env() + ": " + JSON.writeValueAsString(dflt) + "   # " + oneLine(k.doc()));
            }
        }
        commented.forEach((cm, keys) -> {
            boolean read = workloads.stream().anyMatch(w -> w.container().getEnvFrom().stream().anyMatch(f -> f.getConfigMapRef().getName().equals(cm)));
            if (!keys.isEmpty() && !read) {
                problems.add("ConfigMap " + cm + " shows " + keys.keySet() + ", but no workload reads it whole (envFrom): uncommented, they would set nothing");
            }
        });
        // the overlay generates the Secrets from secrets/*.env(.example): each one lists every variable taken from it
        Build overlay = builds().skip(1).findFirst().orElseThrow();
        for (Workload w : workloads(overlay)) {
            w.container().getEnv().stream().filter(e -> e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null).forEach(e -> {
                var ref = e.getValueFrom().getSecretKeyRef();
                Secret s = overlay.named(Secret.class, ref.getName());
                if (s == null || !s.getStringData().containsKey(ref.getKey())) {
                    problems.add(w.name() + ": " + e.getName() + " from Secret " + ref.getName() + ", which overlays/example/secrets/*.env.example"
                            + " does not list");
                }
            });
        }
        if (!problems.isEmpty()) {
            StringBuilder out = new StringBuilder("# expected lines per ConfigMap, in the settings definitions' order\n");
            expected.forEach((cm, lines) -> out.append("\n").append(cm).append(":\n").append(lines.values().stream()
                    .map(l -> "  " + l).collect(Collectors.joining("\n"))).append("\n"));
            Files.writeString(Path.of("target", "configmap-keys.yaml"), out);
        }
        assertThat(problems).as("see cli/target/configmap-keys.yaml for the expected lines").isEmpty();
    }

    /** Where a {@code QUEEN_X_FILE} path reads from: "Secret s (file)", "ConfigMap c (file)", or "file on no volume". */
    static String fileSource(Build b, Workload w, String path) {
        MountedFile f = path == null ? null : mounted(b, w, path);
        return f == null ? "file " + path + " on no volume" : f.source() + " (file)";
    }

    /** A commented key: {@code # QUEEN_X: "<default>"   # <what it is>} (a JSON string, so an empty default shows). */
    static final Pattern COMMENTED = Pattern.compile("#\\s*(QUEEN_[A-Z0-9_]+):\\s*(\"(?:[^\"\\\\]|\\\\.)*\")\\s+#\\s+\\S.*");

    /** base/configmap.yaml's commented keys, per ConfigMap (the parsed model drops comments: read the text). */
    static Map<String, Map<String, String>> commentedKeys(Path file) throws Exception {
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        for (String doc : KustomizeBuild.read(file).split("(?m)^---$")) {
            Matcher name = Pattern.compile("(?m)^  name: (\\S+)$").matcher(doc);
            if (!name.find()) {
                continue;
            }
            Map<String, String> keys = out.computeIfAbsent(name.group(1), x -> new LinkedHashMap<>());
            for (String line : doc.substring(Math.max(0, doc.indexOf("\ndata:"))).split("\n")) {
                String l = line.strip();
                if (l.matches("#\\s*QUEEN_.*")) {
                    Matcher m = COMMENTED.matcher(l);
                    assertThat(m.matches()).as("%s: a commented key is `# QUEEN_X: \"<default>\"   # <what it is>`: %s", file, l).isTrue();
                    assertThat(keys.put(m.group(1), JSON.readValue(m.group(2), String.class))).as("%s: %s commented twice", file, m.group(1)).isNull();
                }
            }
        }
        return out;
    }

    /** The settings as the process loads them from this environment (`migrate` through its own options: a pool of 4). */
    static Config load(Workload w, Map<String, String> env) {
        return w.process().equals("migrate") ? ConfigLoader.load(MigrateSettings.definition(), null, new DatabaseOptions().environment(env)) : ConfigLoader.load(w.def(), null, env);
    }

    /** The key's default as the process applies it: the declared text, unless the process starts from another value. */
    static String defaultText(Workload w, ConfigDef.Key k, Config defaults, Map<String, String> required) {
        if (k.required()) {
            return "";
        }
        Map<String, String> declared = new LinkedHashMap<>(required);
        declared.put(k.env(), k.defaultValue());
        Object applied = value(defaults, k);
        if (value(load(w, declared), k).equals(applied)) {
            return k.defaultValue();
        }
        return applied instanceof List<?> l ? l.stream().map(String::valueOf).collect(Collectors.joining(",")) : String.valueOf(applied);
    }

    static Object value(Config c, ConfigDef.Key k) {
        return switch (k.type()) {
            case STRING, PASSWORD -> c.string(k.name());
            case INT -> c.intValue(k.name());
            case LONG -> c.longValue(k.name());
            case BOOLEAN -> c.bool(k.name());
            case DURATION -> c.duration(k.name());
            case LIST -> c.list(k.name());
        };
    }

    /** The doc's first sentence, cut at a clause within 120 characters: the comment after a commented key (docs/configuration.md has it all). */
    static String oneLine(String doc) {
        Matcher m = Pattern.compile("(?<!e\\.g|i\\.e)\\.(\\s|$)").matcher(doc);
        String s = (m.find() ? doc.substring(0, m.start() + 1) : doc).replace('\n', ' ');
        if (s.length() <= 120) {
            return s;
        }
        Matcher clause = Pattern.compile("[;:]\\s| \\(").matcher(s);
        int cut = -1;
        while (clause.find() && clause.start() <= 120) {
            cut = clause.start();
        }
        String head = cut >= 50 ? s.substring(0, cut) : s.substring(0, s.lastIndexOf(' ', 120));
        return head.endsWith("...") ? head : head + " ...";
    }

    /** The PrometheusRule is the compose kit's alerts.yml, rule for rule (both read through the operator's typed model). */
    @ParameterizedTest(name = "{0}")
    @MethodSource("builds")
    void thePrometheusRuleIsTheComposeKitsAlertRules(Build b) throws Exception {
        PrometheusRule rule = b.all(PrometheusRule.class).get(0);
        PrometheusRule compose = JSON.convertValue(JSON.createObjectNode().set("spec", ObservabilityKit.yaml(ObservabilityKit.ALERTS)),
                PrometheusRule.class);
        noUnknownField(compose, "alerts.yml", new IdentityHashMap<>());
        if (!JSON.valueToTree(rule.getSpec()).equals(JSON.valueToTree(compose.getSpec()))) {
            // the fix, written out: the file's head and alerts.yml indented under spec
            Path file = K8S.resolve("monitoring/prometheusrule.yaml");
            String text = KustomizeBuild.read(file);
            String alerts = KustomizeBuild.read(ObservabilityKit.ALERTS);
            String fixed = text.substring(0, text.indexOf("\nspec:\n") + 7)
                    + alerts.substring(alerts.indexOf("groups:")).lines().map(l -> l.isEmpty() ? l : "  " + l).collect(Collectors.joining("\n", "", "\n"));
            Files.writeString(Path.of("target", "prometheusrule.yaml"), fixed);
            fail(file + " differs from " + ObservabilityKit.ALERTS + ": cp cli/target/prometheusrule.yaml " + "deploy/kubernetes/monitoring/");
        }
        assertThat(rule.getSpec().getGroups().get(0).getRules()).hasSize(ObservabilityKit.rules().size());
    }

    @Test
    void theOverlaysSecretsStayOutOfGitAndTheImage() {
        assertThat(KustomizeBuild.read(OVERLAY.resolve("secrets/.gitignore")).lines()).contains("*.env", "*.pem");
        assertThat(KustomizeBuild.read(Path.of("..", ".dockerignore")).lines()).contains("deploy/kubernetes/**/secrets/*.env",
                "deploy/kubernetes/**/secrets/*.pem");
        for (JsonNode g : KustomizeBuild.documents(OVERLAY.resolve("kustomization.yaml")).get(0).get("secretGenerator")) {
            for (JsonNode env : g.path("envs")) {
                for (String line : KustomizeBuild.read(OVERLAY.resolve(env.asText() + ".example")).split("\n")) {
                    if (line.contains("=") && !line.startsWith("#")) {
                        assertThat(line).as("%s.example commits no value", env.asText()).endsWith("=");
                    }
                }
            }
            for (JsonNode f : g.path("files")) {
                String file = f.asText().substring(f.asText().indexOf('=') + 1);
                assertThat(file).as("a generated Secret's file is one secrets/.gitignore keeps out").startsWith("secrets/").endsWith(".pem");
                assertThat(KustomizeBuild.read(OVERLAY.resolve(file + ".example"))).as("%s.example is a placeholder, not a key", file)
                        .doesNotContain("-----BEGIN");
            }
        }
    }

    @Test
    void theOperationsDocSaysHowToApplyItAndWhatToFillIn() {
        String readme = KustomizeBuild.read(Path.of("..", "docs", "operations.md"));
        int start = readme.indexOf("\n## Kubernetes\n");
        assertThat(start).as("docs/operations.md section 'Kubernetes'").isNotNegative();
        int end = readme.indexOf("\n## ", start + 1);
        String section = readme.substring(start, end < 0 ? readme.length() : end);
        assertThat(section).contains("kubectl apply -k deploy/kubernetes/overlays/example");
        Build base = builds().findFirst().orElseThrow();
        for (Workload w : workloads(base)) {
            w.container().getEnv().stream().filter(e -> e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null)
                    .forEach(e -> assertThat(section).as("docs/operations.md names Secret %s", e.getValueFrom().getSecretKeyRef().getName())
                            .contains("`" + e.getValueFrom().getSecretKeyRef().getName() + "`"));
        }
        for (Workload w : workloads(base)) {
            for (Volume v : w.template().getSpec().getVolumes()) {
                String name = v.getSecret() != null ? v.getSecret().getSecretName() : v.getConfigMap() != null ? v.getConfigMap().getName() : null;
                if (name != null) {
                    assertThat(section).as("docs/operations.md names %s, mounted by %s", name, w.name()).contains("`" + name + "`");
                }
            }
        }
        base.objects().forEach(o -> assertThat(section).as("docs/operations.md says what %s is for", o.getKind()).contains(o.getKind()));
    }
}
