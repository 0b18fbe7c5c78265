package io.queen.timers.bench;

import com.github.luben.zstd.Zstd;
import io.queen.timers.log.codec.PackedSegment;
import io.queen.timers.log.codec.SegmentCodec;
import java.util.Collection;
import java.util.Random;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs {@link CodecBench} through JMH's Runner API and prints pack and plain-zstd throughput in
 * MB/s of raw segment bytes, and their ratio. About a minute (2 forks × 8 s × 2 benchmarks).
 *
 * <pre>
 * mvn -B -q -pl bench -am package -DskipTests
 * java -cp bench/target/benchmarks.jar io.queen.timers.bench.CodecBenchMain
 * </pre>
 */
public final class CodecBenchMain {

    private CodecBenchMain() {}

    public static void main(String[] args) throws RunnerException {
        Options options = new OptionsBuilder().include(CodecBench.class.getName() + "\\.").build();
        Collection<RunResult> results = new Runner(options).run();
        double pack = score(results, "pack");
        double zstd = score(results, "zstdOnly");
        int raw = CodecBench.rawBytes();
        PackedSegment seg = SegmentCodec.pack(CodecBench.frames(new Random(42)));
        byte[] rawBytes = Zstd.decompress(seg.blob(), seg.rawBytes());
        int plainSize = Zstd.compress(rawBytes, SegmentCodec.ZSTD_LEVEL).length;
        System.out.printf("%nsegment: %d frames x %d-byte JSON payloads = %d raw bytes -> %d bytes zstd-3 (%.2fx smaller); hashes %d bytes%n",
                CodecBench.FRAMES, CodecBench.PAYLOAD_BYTES, raw, seg.blob().length, (double) raw / seg.blob().length,
                seg.hashes().length);
        System.out.printf("plain zstd-3 of the same raw bytes: %d bytes (pack's blob is that same stream: %s)%n",
                plainSize, plainSize == seg.blob().length);
        System.out.printf("pack (frames + zstd + hashes): %,.0f segments/s = %.1f MB/s raw%n", pack, pack * raw / 1e6);
        System.out.printf("plain zstd level 3:            %,.0f segments/s = %.1f MB/s raw%n", zstd, zstd * raw / 1e6);
        System.out.printf("ratio pack / plain zstd: %.3f (pack keeps %.0f%% of zstd's throughput)%n", pack / zstd, 100 * pack / zstd);
    }

    private static double score(Collection<RunResult> results, String method) {
        return results.stream()
                .filter(r -> r.getParams().getBenchmark().endsWith("." + method))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no result for " + method))
                .getPrimaryResult().getScore();
    }
}
