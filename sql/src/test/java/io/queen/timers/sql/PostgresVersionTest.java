package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The decision of the version check (docs/operations.md#compatibility); CompatibilityMatrixIT (e2e) runs it on real servers. */
class PostgresVersionTest {

    @Test
    void theMajorIsServerVersionNumOverTenThousand() {
        assertThat(PostgresVersion.major(130023)).isEqualTo(13);
        assertThat(PostgresVersion.major(140000)).isEqualTo(14);
        assertThat(PostgresVersion.major(170011)).isEqualTo(17);
        assertThat(PostgresVersion.major(180001)).isEqualTo(18);
    }

    @Test
    void belowFourteenIsRefusedNamingTheVersionsAndTheDoc() {
        assertThat(PostgresVersion.refusal(130023, "13.23")).hasValueSatisfying(why -> assertThat(why)
                .contains("PostgreSQL 13.23 is not supported").contains("14 or newer").contains("14 to 17")
                .contains("docs/operations.md#compatibility"));
        assertThat(PostgresVersion.refusal(120022, "12.22 (Debian 12.22-1)")).isPresent();
        assertThat(PostgresVersion.refusal(139999, "13.99")).isPresent();
    }

    @Test
    void fourteenToSeventeenAndNewerAreAccepted() {
        for (int num : new int[] {140000, 140025, 150020, 160016, 170011, 180001}) {
            assertThat(PostgresVersion.refusal(num, String.valueOf(num))).as("%d", num).isEmpty();
        }
    }
}
