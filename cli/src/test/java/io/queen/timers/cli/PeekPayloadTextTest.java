package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.inspect.TimerState;
import io.queen.timers.inspect.TimerView;
import io.queen.timers.log.codec.Compression;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** peek shows a stored zstd payload decompressed, within a bound: a corrupt size field cannot take the heap. */
class PeekPayloadTextTest {

    private static TimerView stored(byte[] payload, boolean zstd) {
        Instant t = Instant.EPOCH;
        return new TimerView(UUID.randomUUID(), "q", "k", "Default", t, t, TimerState.WAITING, "txn", UUID.randomUUID(),
                payload, zstd, false, null, 0, null, null, t, t, t, null);
    }

    @Test
    void aZstdPayloadIsShownDecompressed() {
        byte[] json = "{\"orderId\":42}".getBytes();
        assertThat(PeekCommand.payloadText(stored(Compression.compress(json), true), java.util.Optional.empty(), 1000)).isEqualTo("{\"orderId\":42}");
    }

    @Test
    void aZstdPayloadAboveTheBoundIsRefusedNotRead() {
        String text = PeekCommand.payloadText(stored(Compression.compress(new byte[100_000]), true), java.util.Optional.empty(), 1000);
        assertThat(text).startsWith("(zstd payload that does not decompress").contains("above the limit of 1000");
    }
}
