package io.queen.timers.http.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** One tenant's share is its own: used up, it refuses that tenant only, and each place comes back once. */
class TenantSharesTest {

    @Test
    void aTenantPastItsShareIsRefusedWhileAnotherIsServedAndAPlaceComesBackOnce() {
        TenantShares shares = new TenantShares(2);
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        Optional<TenantShares.Taken> first = shares.take(a);
        Optional<TenantShares.Taken> second = shares.take(a);
        assertThat(first).isPresent();
        assertThat(second).isPresent();
        assertThat(shares.take(a)).as("a third request of the same tenant").isEmpty();
        assertThat(shares.take(b)).as("another tenant's").isPresent();
        first.get().close();
        first.get().close(); // twice: given back once
        assertThat(shares.inProgress(a)).isEqualTo(1);
        assertThat(shares.take(a)).isPresent();
        assertThat(shares.take(a)).isEmpty();
    }
}
