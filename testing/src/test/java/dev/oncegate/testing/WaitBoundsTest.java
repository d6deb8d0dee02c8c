package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** How long a contender may be asked to wait: "as long as it takes" must not read as a ZooKeeper failure. */
class WaitBoundsTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void veryLongWaitOnFreshKey_proceeds() throws Exception {
        // Given a fresh key, When a contender enters willing to wait "forever"
        Worker w = zk.newWorker("task-a");
        try (Attempt attempt = w.gate().enter(zk.key(), Duration.ofSeconds(Long.MAX_VALUE))) {
            // Then it proceeds (nobody else is active) and delivers once
            assertThat(attempt.decision()).isInstanceOf(Decision.Proceed.class);
            assertThat(attempt.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(w.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
