package io.queen.timers.bench;

import io.queen.timers.log.codec.Compression;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.PackedSegment;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.UuidV7;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of packing one fire-sized segment: 200 frames of 200-byte JSON payloads (the sweeper's
 * default batch), frames + one zstd stream at level 3 + 200 XXH3-128 hashes ({@link #pack}), against
 * plain zstd level 3 of the same raw bytes ({@link #zstdOnly}) in the same run. The difference is
 * what the frame layout and the hashes cost on top of compression. Run it with {@link CodecBenchMain}
 * (prints MB/s and the ratio) or with JMH's main: {@code java -jar bench/target/benchmarks.jar CodecBench}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xmx512m"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class CodecBench {

    public static final int FRAMES = 200;
    public static final int PAYLOAD_BYTES = 200;

    private List<Frame> frames;
    /** Exactly the bytes pack() compresses, so both benchmarks compress the same input. */
    private byte[] raw;

    @Setup
    public void setUp() {
        frames = frames(new Random(42));
        PackedSegment seg = SegmentCodec.pack(frames);
        raw = Compression.decompress(seg.blob(), seg.rawBytes());
    }

    @Benchmark
    public PackedSegment pack() {
        return SegmentCodec.pack(frames);
    }

    @Benchmark
    public byte[] zstdOnly() {
        return Compression.compress(raw);
    }

    /** The raw segment size, for MB/s: both benchmarks process exactly these bytes per call. */
    public static int rawBytes() {
        return SegmentCodec.pack(frames(new Random(42))).rawBytes();
    }

    /** 200 timer-like frames: UUIDv7 ids, a per-order txn, one producer, 200-byte JSON of varying values. */
    static List<Frame> frames(Random random) {
        List<Frame> out = new ArrayList<>(FRAMES);
        for (int i = 0; i < FRAMES; i++) {
            int order = 100_000 + random.nextInt(900_000);
            StringBuilder json = new StringBuilder()
                    .append("{\"orderId\":").append(order)
                    .append(",\"customer\":\"c-").append(random.nextInt(1_000_000))
                    .append("\",\"amount\":").append(random.nextInt(100_000) / 100.0)
                    .append(",\"currency\":\"EUR\",\"kind\":\"reminder\",\"attempt\":").append(random.nextInt(3))
                    .append(",\"note\":\"");
            while (json.length() < PAYLOAD_BYTES - 2) {
                json.append((char) ('a' + random.nextInt(26)));
            }
            json.append("\"}");
            byte[] payload = json.toString().getBytes(StandardCharsets.UTF_8);
            out.add(new Frame(UuidV7.next(), null, "remind-order-" + order, "orders-service", false, payload));
        }
        return out;
    }
}
