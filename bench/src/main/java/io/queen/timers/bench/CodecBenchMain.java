package io.queen.timers.bench;

import io.queen.timers.log.codec.PackedSegment;
import io.queen.timers.log.codec.SegmentCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs {@link CodecBench} through JMH's Runner API and prints pack and plain-zstd throughput in MB/s
 * of raw segment bytes, and their ratio.
 *
 * <p>Why rounds: on a shared machine the load changes within seconds, and JMH runs one benchmark
 * after the other, so one long run of each compares two different machines. Here each round runs
 * both benchmarks back to back (a fork each, 2 × 0.5 s warm-up, 4 × 0.5 s measurement; the order
 * alternates per round so drift cancels), the ratio is taken inside the round, and the median over
 * rounds is reported with its spread. About 45 s for the default 5 rounds.
 *
 * <pre>
 * mvn -B -q -pl bench -am package -DskipTests
 * java -cp bench/target/benchmarks.jar io.queen.timers.bench.CodecBenchMain [rounds]
 * </pre>
 */
public final class CodecBenchMain {

    private CodecBenchMain() {}

    public static void main(String[] args) throws RunnerException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        PackedSegment seg = SegmentCodec.pack(CodecBench.frames(new Random(42)));
        int raw = seg.rawBytes();
        List<double[]> results = new ArrayList<>(); // {pack ops/s, zstd ops/s}
        for (int round = 0; round < rounds; round++) {
            double pack;
            double zstd;
            if (round % 2 == 0) {
                pack = run("pack");
                zstd = run("zstdOnly");
            } else {
                zstd = run("zstdOnly");
                pack = run("pack");
            }
            results.add(new double[] {pack, zstd});
            System.out.printf("round %d: pack %.1f MB/s, plain zstd %.1f MB/s, ratio %.3f%n",
                    round + 1, pack * raw / 1e6, zstd * raw / 1e6, pack / zstd);
        }
        double[] ratios = results.stream().mapToDouble(r -> r[0] / r[1]).sorted().toArray();
        double packMb = median(results.stream().mapToDouble(r -> r[0] * raw / 1e6).sorted().toArray());
        double zstdMb = median(results.stream().mapToDouble(r -> r[1] * raw / 1e6).sorted().toArray());
        System.out.printf("%nsegment: %d frames x %d-byte JSON payloads = %d raw bytes -> %d bytes zstd-3 (%.2fx smaller), hashes %d bytes%n",
                CodecBench.FRAMES, CodecBench.PAYLOAD_BYTES, raw, seg.blob().length, (double) raw / seg.blob().length,
                seg.hashes().length);
        System.out.printf("pack (frames + zstd-3 + hashes): %.1f MB/s raw (median of %d rounds)%n", packMb, rounds);
        System.out.printf("plain zstd level 3, same bytes:  %.1f MB/s raw (median of %d rounds)%n", zstdMb, rounds);
        System.out.printf("ratio pack / plain zstd: median %.3f, range %.3f .. %.3f%n",
                median(ratios), ratios[0], ratios[ratios.length - 1]);
    }

    private static double run(String method) throws RunnerException {
        Options options = new OptionsBuilder()
                .include(CodecBench.class.getName() + "\\." + method + "$")
                .forks(1)
                .warmupIterations(2)
                .warmupTime(TimeValue.milliseconds(500))
                .measurementIterations(4)
                .measurementTime(TimeValue.milliseconds(500))
                .verbosity(VerboseMode.SILENT)
                .build();
        RunResult result = new Runner(options).runSingle();
        return result.getPrimaryResult().getScore();
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
