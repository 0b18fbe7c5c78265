package io.queen.timers.sweeper;

import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.fire.FireResult;
import io.queen.timers.sweeper.fire.Firer;
import io.queen.timers.sweeper.pack.FireBatch;
import io.queen.timers.sweeper.pack.Packer;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;

/** One sweeper pass by hand: claim what is due, pack, fire every batch. Returns how many timers fired. */
final class FireDue {

    private FireDue() {}

    static int now(DataSource ds) throws SQLException {
        int fired = 0;
        for (FireBatch batch : new Packer(8 * 1024 * 1024).pack(new Claimer(ds, 200, Duration.ofSeconds(30), 200).claim()).fires()) {
            fired += new Firer(ds).fire(batch).stream()
                    .filter(o -> o.result() == FireResult.FIRED).mapToInt(o -> o.segment().timers().size()).sum();
        }
        return fired;
    }
}
