package io.queen.timers.soak;

import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/** The rig's flags (one owner). Defaults are the issue's: 20 minutes per variant, 2,000 commands/s. */
record RigOptions(long secondsPerVariant, List<Variant> variants, int rate, int maxDelaySeconds, int sampleSeconds,
                  int sweepers, Path launcherJar, Path workDir, Path resultsDir, String note) {

    static final String USAGE = """
            usage: soak/run [--minutes N | --seconds N] [--variants baseline,ff70,...] [--rate COMMANDS_PER_S]
                            [--max-delay-seconds S] [--sample-seconds S] [--sweepers N] [--jar local/target/queen-timers.jar]
                            [--work-dir DIR] [--results DIR] [--note TEXT]
            variants:""" + " " + String.join(" ", Variant.all().stream().map(Variant::name).toList());

    static RigOptions parse(String[] args) {
        long seconds = 20 * 60;
        List<Variant> variants = Variant.all();
        int rate = 2_000;
        int maxDelay = 120;
        int sample = 10;
        int sweepers = 1;
        Path jar = Path.of("local/target/queen-timers.jar");
        Path work = Path.of("soak/target/work");
        Path results = Path.of("soak/results/" + LocalDate.now(ZoneOffset.UTC));
        String note = "";
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help")) {
                throw new IllegalArgumentException(USAGE);
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("missing value after " + a + "\n" + USAGE);
            }
            switch (a) {
                case "--minutes" -> seconds = Math.round(Double.parseDouble(args[++i]) * 60);
                case "--seconds" -> seconds = Long.parseLong(args[++i]);
                case "--variants" -> variants = pick(args[++i]);
                case "--rate" -> rate = Integer.parseInt(args[++i]);
                case "--max-delay-seconds" -> maxDelay = Integer.parseInt(args[++i]);
                case "--sample-seconds" -> sample = Integer.parseInt(args[++i]);
                case "--sweepers" -> sweepers = Integer.parseInt(args[++i]);
                case "--jar" -> jar = Path.of(args[++i]);
                case "--work-dir" -> work = Path.of(args[++i]);
                case "--results" -> results = Path.of(args[++i]);
                case "--note" -> note = args[++i];
                default -> throw new IllegalArgumentException("unknown option " + a + "\n" + USAGE);
            }
        }
        if (seconds < 3L * sample || rate < 1 || maxDelay < 2 || sample < 1 || sweepers < 1) {
            throw new IllegalArgumentException("need seconds >= 3 samples, rate >= 1, max delay >= 2 s, sweepers >= 1\n" + USAGE);
        }
        return new RigOptions(seconds, variants, rate, maxDelay, sample, sweepers, jar, work, results, note);
    }

    private static List<Variant> pick(String csv) {
        List<Variant> out = new ArrayList<>();
        for (String n : csv.split(",")) {
            out.add(Variant.all().stream().filter(v -> v.name().equals(n.trim())).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("unknown variant '" + n + "'\n" + USAGE)));
        }
        return out;
    }
}
