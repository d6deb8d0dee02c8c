package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;


import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's extension in ensemble mode: a leader killed mid-attempt, restarted before the next test. */
class EnsembleExtensionTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.ensemble3();

    @Test
    void leaderKilledAfterProceed_theEffectIsStillDecidedOnce() throws Exception {
        // Given a worker elected for an effect on a 3-server ensemble
        RecordingProvider provider = zk.provider();
        EffectKey key = zk.key();
        Gate first = zk.newGate("first");
        try (Attempt attempt = first.enter(key)) {
            assertThat(attempt.decision()).isInstanceOf(Decision.Proceed.class);

            // When the ensemble's leader is killed before it crosses
            zk.ensemble().killLeader();
            assertThat(zk.ensemble().awaitLeader(Timing.EVENTUALLY)).isTrue();
            attempt.cross(provider.verified());
        }

        // Then, whatever the crossing met, a later contender finds the effect decided or delivers it: once in all
        try (Attempt later = zk.newGate("later").enter(key, Timing.WAIT)) {
            if (later.decision() instanceof Decision.Proceed) {
                later.cross(provider.verified());
            }
        }
        assertThat(provider.deliveries()).isEqualTo(1);
    }

    @Test
    void everyTest_getsAFreshInitialisedNamespace() throws Exception {
        try (Gate reader = zk.newGate("reader")) {
            assertThat(reader.namespace()).startsWith("/test-");
            assertThat(zk.newClient().checkExists().forPath(zk.namespace() + "/genesis")).isNotNull();
        }
    }
}
