package io.queen.timers.cli;

import io.queen.timers.core.audit.AuditSettings;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigDef;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Prints the README's configuration table from the settings definitions themselves. */
@Command(name = "config-docs", hidden = true, mixinStandardHelpOptions = true,
        description = "Print every configuration key (Markdown table) from the settings definitions.")
final class ConfigDocsCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    /** The definitions per process; the shared keys are listed once, under "all". */
    static Map<String, ConfigDef> definitions() {
        Map<String, ConfigDef> defs = new LinkedHashMap<>();
        defs.put("all", CommonSettings.definition());
        defs.put("bridge, sweeper (audit relay)", AuditSettings.definition());
        return defs;
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        out.println("| key | used by | default | environment | meaning |");
        out.println("|---|---|---|---|---|");
        Set<String> seen = new LinkedHashSet<>();
        definitions().forEach((process, def) -> def.keys().forEach(k -> {
            if (seen.add(k.name())) {
                String dflt = k.required() ? "*required*" : k.defaultValue().isEmpty() ? "(empty)" : "`" + k.defaultValue() + "`";
                out.println("| `" + k.name() + "` | " + process + " | " + dflt + " | `" + k.env() + "` | "
                        + k.doc().replace("|", "\\|") + " |");
            }
        }));
        out.flush();
        return 0;
    }
}
