package io.queen.timers.core.health;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.core.config.HealthSettings;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The one place a process's readiness is kept: every loop's {@link LoopProgress}, plus any other
 * {@link ReadinessCheck} (the start-up phase, the cached database and Kafka probes). {@code /health/ready}
 * reads {@link #report()}; every check answers from memory, so a request never waits for the database or
 * the broker.
 */
public final class Health {

    /** One line of the readiness body: a check's name and its problem, if any. */
    public record Line(String name, Optional<String> problem) {}

    /** The readiness answer: ready when no line has a problem. */
    public record Report(boolean ready, List<Line> lines) {
        public String text() {
            return text(true);
        }

        /**
         * The body of {@code /health/ready}; without {@code details} each problem keeps only its head (what and
         * since when, see {@link #redact}): error texts from the database or a file name stay off the network.
         */
        public String text(boolean details) {
            StringBuilder b = new StringBuilder(ready ? "ready\n" : "not ready\n");
            for (Line l : lines) {
                b.append(l.name()).append(": ").append(l.problem().map(p -> details ? p : redact(p)).orElse("ok")).append('\n');
            }
            return b.toString();
        }

        /** The lines that have a problem, each as {@code name: problem}. */
        public List<String> problems() {
            return lines.stream().flatMap(l -> l.problem().map(p -> l.name() + ": " + p).stream()).toList();
        }
    }

    private static final java.util.regex.Pattern SQLSTATE = java.util.regex.Pattern.compile("SQLSTATE ([0-9A-Z]{5})");

    /**
     * A problem without its details: the text up to the first {@code ": "} or {@code "; "} (every problem
     * starts with what is wrong and since when, and carries error messages, SQL texts, host, user and file
     * names after it), plus the SQLSTATE code if the rest had one (a class, not a message). ISO times have no
     * space after their colons, so they stay.
     */
    public static String redact(String problem) {
        int cut = -1;
        for (String sep : new String[] {": ", "; "}) {
            int i = problem.indexOf(sep);
            if (i >= 0 && (cut < 0 || i < cut)) {
                cut = i;
            }
        }
        if (cut < 0) {
            return problem;
        }
        java.util.regex.Matcher m = SQLSTATE.matcher(problem.substring(cut));
        return problem.substring(0, cut) + (m.find() ? " (SQLSTATE " + m.group(1) + ")" : "") + " [details only to loopback]";
    }

    private final HealthSettings defaults;
    private final Clock clock;
    private final List<ReadinessCheck> checks = new CopyOnWriteArrayList<>();
    private final Map<ReadinessCheck, Gauge> gauges = new ConcurrentHashMap<>();
    private volatile MeterRegistry registry;

    public Health(HealthSettings defaults, Clock clock) {
        this.defaults = defaults;
        this.clock = clock;
    }

    /** The process's bounds ({@code health.*}), the system clock. */
    public static Health from(HealthSettings settings) {
        return new Health(settings, Clock.systemUTC());
    }

    /** Registers a loop with the process's bounds; the loop reports its cycles to the returned record. */
    public LoopProgress loop(String name) {
        return loop(name, defaults);
    }

    /** Registers a loop with bounds of its own (a loop whose cycles are legitimately longer). */
    public LoopProgress loop(String name, HealthSettings bounds) {
        LoopProgress p = new LoopProgress(name, bounds, clock);
        add(p);
        return p;
    }

    /** Adds a check; it must answer from memory (see the class comment). */
    public void add(ReadinessCheck check) {
        checks.add(check);
        if (registry != null) {
            export(check);
        }
    }

    public void remove(ReadinessCheck check) {
        checks.remove(check);
        Gauge g = gauges.remove(check);
        if (g != null) {
            registry.remove(g);
        }
    }

    /**
     * Readiness as metrics, so that an alert and a dashboard see what {@code /health/ready} says:
     * {@code queen_timers_ready} (1 when it answers 200, else 0) and {@code queen_timers_check_ready{check}}
     * (one per line of its body; a check added later is exported as it is added). Evaluated at scrape
     * time, from memory, like the endpoint itself.
     */
    public void exportTo(MeterRegistry registry) {
        Gauge.builder("queen.timers.ready", this, h -> h.report().ready() ? 1 : 0)
                .description("1 when /health/ready answers 200 (every check ok), else 0").strongReference(true).register(registry);
        this.registry = registry;
        checks.forEach(this::export);
    }

    private void export(ReadinessCheck check) {
        gauges.computeIfAbsent(check, c -> Gauge.builder("queen.timers.check.ready", c, k -> problemOf(k).isEmpty() ? 1 : 0)
                .tag("check", c.name()).description("1 when this line of /health/ready is ok, else 0")
                .strongReference(true).register(registry));
    }

    public HealthSettings defaults() {
        return defaults;
    }

    public Clock clock() {
        return clock;
    }

    public Report report() {
        List<Line> lines = new ArrayList<>();
        boolean ready = true;
        for (ReadinessCheck c : checks) {
            Optional<String> problem = problemOf(c);
            ready &= problem.isEmpty();
            lines.add(new Line(c.name(), problem));
        }
        return new Report(ready, List.copyOf(lines));
    }

    private static Optional<String> problemOf(ReadinessCheck c) {
        try {
            return c.problem();
        } catch (RuntimeException e) {
            return Optional.of(e.toString());
        }
    }
}
