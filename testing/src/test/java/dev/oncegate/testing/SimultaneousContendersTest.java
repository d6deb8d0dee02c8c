package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** SPEC §9 "simultaneous matching tasks": many sessions enter the same effect at once; one delivers. */
class SimultaneousContendersTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final int CONTENDERS = 20;

    @Test
    void twentySessionsEnterAtOnce_exactlyOneDeliversOthersStopSent() throws Exception {
        // Given twenty workers, each with its own ZooKeeper session
        List<Gate> gates = new ArrayList<>();
        for (int i = 0; i < CONTENDERS; i++) {
            gates.add(zk.newGate("sibling-" + i));
        }
        RecordingProvider provider = zk.provider();

        // When all of them enter the same key at once, willing to wait for the executor
        List<Race.Entry> entries = Race.of(gates).enter(zk.key(), Timing.WAIT, provider.verified());

        // Then exactly one delivery; every other contender learned the key is consumed
        assertThat(provider.deliveries()).isEqualTo(1);
        assertThat(entries).filteredOn(e -> e.crossing() instanceof Crossing.Crossed c && c.outcome() == Outcome.SENT_VERIFIED)
                .hasSize(1);
        assertThat(entries).filteredOn(e -> e.decision() instanceof Decision.StopSent).hasSize(CONTENDERS - 1);
        KeyHistory history = gates.get(0).inspect(zk.key().key());
        assertThat(history.scopes()).hasSize(1);
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        String winner = history.scopes().get(0).outcome().by().task();
        assertThat(winner).isEqualTo(provider.ledger().get(0).taskId());
    }
}
