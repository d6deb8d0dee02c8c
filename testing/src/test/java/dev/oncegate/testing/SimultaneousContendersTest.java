package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import org.junit.jupiter.api.Test;

/** SPEC §9 "simultaneous matching tasks": many sessions enter the same effect at once; one delivers. */
class SimultaneousContendersTest extends ServerScenario {

    static final int CONTENDERS = 20;

    @Test
    void twentySessionsEnterAtOnce_exactlyOneDeliversOthersStopSent() throws Exception {
        // Given twenty workers, each with its own ZooKeeper session
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < CONTENDERS; i++) {
            workers.add(worker("sibling-" + i));
        }
        ExecutorService pool = pool(CONTENDERS);
        CyclicBarrier start = new CyclicBarrier(CONTENDERS);

        // When all of them enter the same key at once, willing to wait for the executor
        List<Future<String>> results = new ArrayList<>();
        for (Worker w : workers) {
            results.add(pool.submit(() -> {
                start.await(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
                try (Attempt attempt = w.gate().enter(key, Timing.WAIT)) {
                    if (attempt.decision() instanceof Decision.Proceed) {
                        Crossing c = attempt.cross(provider.verified());
                        return c instanceof Crossing.Crossed crossed ? "crossed:" + crossed.outcome().wireName() : "refused";
                    }
                    return attempt.decision().kind();
                }
            }));
        }
        List<String> kinds = new ArrayList<>();
        for (Future<String> f : results) {
            kinds.add(f.get(Timing.EVENTUALLY.toMillis() * 2, TimeUnit.MILLISECONDS));
        }

        // Then exactly one delivery; every other contender learned the key is consumed
        assertThat(provider.deliveries()).isEqualTo(1);
        assertThat(kinds).filteredOn(k -> k.equals("crossed:sent_verified")).hasSize(1);
        assertThat(kinds).filteredOn(k -> k.equals("stop_sent")).hasSize(CONTENDERS - 1);
        KeyHistory history = workers.get(0).gate().inspect(key.key());
        assertThat(history.scopes()).hasSize(1);
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        String winner = history.scopes().get(0).outcome().by().task();
        assertThat(winner).isEqualTo(provider.ledger().get(0).taskId());
    }
}
