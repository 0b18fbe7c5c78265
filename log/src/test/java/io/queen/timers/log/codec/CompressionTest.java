package io.queen.timers.log.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.ZstdOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The one zstd helper: round trip at the project's level, and a bound that holds whatever the frame says. */
class CompressionTest {

    @Test
    void roundTripsAtTheProjectsLevel() {
        byte[] raw = "{\"orderId\":42}".repeat(500).getBytes();
        byte[] blob = Compression.compress(raw);
        assertThat(blob).isEqualTo(com.github.luben.zstd.Zstd.compress(raw, 3));
        assertThat(Compression.decompress(blob, raw.length)).isEqualTo(raw);
    }

    @Test
    void refusesAFrameDeclaringMoreThanTheBound() {
        byte[] blob = Compression.compress(new byte[10_000]);
        assertThatThrownBy(() -> Compression.decompress(blob, 9_999))
                .isInstanceOf(CodecException.class).hasMessageContaining("declares 10000 raw bytes, above the limit of 9999");
    }

    @Test
    void refusesAStreamThatDecompressesPastTheBoundWithoutDeclaringItsSize() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ZstdOutputStream z = new ZstdOutputStream(out, 3)) {   // streaming: no content size in the header
            z.write(new byte[1 << 20]);
        }
        assertThatThrownBy(() -> Compression.decompress(out.toByteArray(), 4096))
                .isInstanceOf(CodecException.class).hasMessageContaining("decompresses to more than 4096 bytes");
        assertThat(Compression.decompress(out.toByteArray(), 1 << 20)).hasSize(1 << 20);
    }

    @Test
    void refusesBytesAfterTheFrameAndGarbage() {
        byte[] blob = Compression.compress(new byte[100]);
        byte[] longer = Arrays.copyOf(blob, blob.length + 1);
        assertThatThrownBy(() -> Compression.decompress(longer, 1000))
                .isInstanceOf(CodecException.class).hasMessageContaining("1 bytes after the zstd frame");
        assertThatThrownBy(() -> Compression.decompress("not zstd".getBytes(), 1000))
                .isInstanceOf(CodecException.class).hasMessageContaining("bad zstd");
    }
}
