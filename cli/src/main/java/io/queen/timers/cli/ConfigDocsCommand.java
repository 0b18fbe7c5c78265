package io.queen.timers.cli;

import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.telemetry.TelemetrySettings;
import io.queen.timers.sweeper.SweeperSettings;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Prints the configuration table of docs/configuration.md from the settings definitions themselves. */
@Command(name = "config-docs", hidden = true, mixinStandardHelpOptions = true,
        description = "Print every configuration key (Markdown table) from the settings definitions.")
final class ConfigDocsCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    /** Each service's full definition (shared keys included). */
    static Map<String, ConfigDef> definitions() {
        Map<String, ConfigDef> defs = new LinkedHashMap<>();
        defs.put("bridge", BridgeSettings.definition());
        defs.put("sweeper", SweeperSettings.definition());
        defs.put("http", io.queen.timers.http.HttpSettings.definition());
        return defs;
    }

    @Override
    public Integer call() {
        Map<String, ConfigDef.Key> keys = new LinkedHashMap<>();
        Map<String, List<String>> usedBy = new LinkedHashMap<>();
        definitions().forEach((process, def) -> def.keys().forEach(k -> {
            keys.putIfAbsent(k.name(), k);
            usedBy.computeIfAbsent(k.name(), n -> new ArrayList<>()).add(process);
        }));
        PrintWriter out = spec.commandLine().getOut();
        out.println("| key | used by | default | environment | meaning |");
        out.println("|---|---|---|---|---|");
        keys.values().forEach(k -> {
            String dflt = k.required() ? "*required*" : k.defaultValue().isEmpty() ? "(empty)" : "`" + k.defaultValue() + "`";
            String users = usedBy.get(k.name()).size() == definitions().size() ? "all" : String.join(", ", usedBy.get(k.name()));
            out.println("| `" + k.name() + "` | " + users + " | " + dflt + " | `" + k.env() + "` | " + k.doc().replace("|", "\\|") + " |");
        });
        // the only variables a service reads outside the table: OpenTelemetry's own (TelemetrySettings)
        out.println();
        out.println("OpenTelemetry's own variables are not queen settings: the OpenTelemetry SDK reads them (and every other `OTEL_*`)"
                + " itself. The services (bridge, sweeper) read only these, to decide whether to trace ([tracing.md](tracing.md#tracing));"
                + " each may also be the Java system property of the same name (`-Dotel.traces.exporter=otlp`), which wins.");
        out.println();
        out.println("| environment | read for |");
        out.println("|---|---|");
        TelemetrySettings.VARIABLES.forEach((name, doc) -> out.println("| `" + name + "` | " + doc + " |"));
        out.flush();
        return 0;
    }
}
