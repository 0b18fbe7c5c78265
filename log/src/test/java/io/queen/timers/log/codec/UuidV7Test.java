package io.queen.timers.log.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class UuidV7Test {

    @Test
    void layoutIsRfc9562Version7Variant10() {
        long before = System.currentTimeMillis();
        UUID id = UuidV7.next();
        long after = System.currentTimeMillis();
        assertThat(id.version()).isEqualTo(7);
        assertThat(id.variant()).isEqualTo(2);
        assertThat(UuidV7.unixMillis(id)).isBetween(before, after + 1);
    }

    @Test
    void ofPlacesEachPart() {
        UUID id = UuidV7.of(0x0189_0A5D_AC96L, 0x74B, -1L);
        assertThat(id.toString()).isEqualTo("01890a5d-ac96-774b-bfff-ffffffffffff");
        assertThat(UuidV7.unixMillis(id)).isEqualTo(0x0189_0A5D_AC96L);
    }

    @Test
    void idsMintedInARowSortInMintOrder() {
        List<UUID> ids = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) { // many per millisecond: the sequence keeps them ordered
            ids.add(UuidV7.next());
        }
        for (int i = 1; i < ids.size(); i++) {
            // UUID.compareTo compares signed longs; the 48-bit timestamp keeps the top bit clear until 10889
            assertThat(ids.get(i).compareTo(ids.get(i - 1))).as("id %d", i).isPositive();
        }
        assertThat(ids).doesNotHaveDuplicates();
    }

    @Test
    void unixMillisRefusesOtherVersions() {
        assertThatThrownBy(() -> UuidV7.unixMillis(UUID.randomUUID())).isInstanceOf(IllegalArgumentException.class);
    }
}
