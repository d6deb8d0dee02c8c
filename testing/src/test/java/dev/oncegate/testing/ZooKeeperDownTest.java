package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** SPEC §9 "unavailable history": with ZooKeeper down, nobody proceeds and no action runs. */
class ZooKeeperDownTest {

    /** A server per test: each one stops it. */
    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone().perTest();

    Worker w;

    @BeforeEach
    void start() {
        w = zk.newWorker("task-a", b -> b.connectTimeout(Timing.scaled(2_000)));
    }

    @Test
    void serverStoppedBeforeEntry_stopsUnavailable() throws Exception {
        // Given the server is down
        zk.server().stop();
        // When a contender enters
        try (Attempt attempt = w.gate().enter(zk.key(), Timing.scaled(1_000))) {
            // Then it fails closed
            assertThat(attempt.decision()).isInstanceOf(Decision.StopUnavailable.class);
            assertThat(attempt.decision()).extracting(d -> ((Decision.Stop) d).reason())
                    .isIn(StopReason.ZOOKEEPER_UNREACHABLE, StopReason.CONNECTION_LOST);
        }
        assertThat(zk.provider().deliveries()).isZero();
        // and once the server is back, nothing was written for this key
        zk.server().restart();
        KeyHistory history = w.gate().inspect(zk.key().key());
        assertThat(history.exists()).isFalse();
    }

    @Test
    void serverStoppedAfterProceed_crossingRefusedActionNeverInvoked() throws Exception {
        // Given an executor that proceeded
        Attempt attempt = w.gate().enter(zk.key());
        assertThat(attempt.decision().proceeds()).isTrue();
        // When the server goes down before it crosses
        zk.server().stop();
        Scenarios.eventually("the client noticed", () -> !w.client().getZookeeperClient().isConnected());
        AtomicInteger invoked = new AtomicInteger();
        Crossing crossing = attempt.cross(ctx -> {
            invoked.incrementAndGet();
            return zk.provider().verified().deliver(ctx);
        });
        // Then the crossing is refused (connection lost) and the action never ran
        Scenarios.assertRefused(crossing, Decision.StopUnavailable.class, StopReason.CONNECTION_LOST);
        assertThat(invoked).hasValue(0);
        attempt.close();
        // and once the server is back the scope is not armed; a new contender can deliver once
        zk.server().restart();
        Scenarios.eventually("reconnected", () -> w.client().getZookeeperClient().isConnected());
        assertThat(w.gate().inspect(zk.key().key()).scopes().get(0).armed()).isNull();
        try (Worker next = zk.newWorker("task-b");
             Attempt again = next.gate().enter(zk.key(), Timing.WAIT)) {
            assertThat(again.decision().proceeds()).isTrue();
            assertThat(again.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(w.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
