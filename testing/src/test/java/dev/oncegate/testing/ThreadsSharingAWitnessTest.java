package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.Outcome;
import dev.oncegate.ZxidMarks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rollback witness under concurrency (issue 15, item 11): threads that share a gate, and gates
 * that share a host's marks file, raise the witness's mark with their own writes all the time. A
 * lease write is compared with the mark as it stood when the write was sent, so another thread's
 * later write never makes it look rolled back. (That a real restore is still caught is
 * {@link RollbackDetectionTest}'s part.)
 */
class ThreadsSharingAWitnessTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final int THREADS = 16;
    /**
     * Keys per test: 400, 2,000 under {@code -Plong} ({@link LongRuns}). Before the fix, 2,000 keys
     * gave 372 rollback stops (about one key in five), so 400 still show the bug about 70 times.
     */
    static final int KEYS = LongRuns.on() ? 2_000 : 400;

    @TempDir
    Path state;

    @Test
    void sixteenThreadsOnOneGate_uniqueKeys_everyKeyDeliveredNoneStopped() throws Exception {
        // Given one gate with an in-memory witness, shared by sixteen threads
        Gate gate = zk.newGate("shared-gate");

        // When they deliver hundreds of unique, uncontended keys
        Map<String, Integer> stops = deliverAll(List.of(gate));

        // Then every key was delivered once and no thread took another's write for a rollback
        assertThat(stops).as("stops by reason").isEmpty();
        assertThat(zk.provider().deliveries()).isEqualTo(KEYS);
    }

    @Test
    void fourGatesSharingAMarksFile_uniqueKeys_everyKeyDeliveredNoneStopped_andTheFileHoldsTheMark() throws Exception {
        // Given four gates (four sessions) of one process, each with its own marks on the host's one file
        Path file = state.resolve("zxid-marks.json");
        List<Gate> gates = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            gates.add(zk.newGate("gate-" + i, b -> b.zxidMarks(ZxidMarks.file(file, zk.connectString()))));
        }

        // When sixteen threads, four per gate, deliver hundreds of unique keys
        Map<String, Integer> stops = deliverAll(gates);

        // Then none stopped, and the file (flushed after each outcome, before any gate closed) holds
        // a mark above every delivery's lease write
        assertThat(stops).as("stops by reason").isEmpty();
        assertThat(zk.provider().deliveries()).isEqualTo(KEYS);
        long highestToken = zk.provider().ledger().stream().mapToLong(d -> d.token().zxid()).max().orElseThrow();
        assertThat(ZxidMarks.read(file)).singleElement().satisfies(m -> {
            assertThat(m.namespace()).isEqualTo(zk.namespace());
            assertThat(m.zxid()).isGreaterThan(highestToken);
        });
    }

    /** Sixteen threads spread over {@code gates} deliver {@link #KEYS} fresh keys; returns the stops by reason. */
    private Map<String, Integer> deliverAll(List<Gate> gates) throws Exception {
        ExecutorService pool = zk.newPool(THREADS);
        AtomicInteger next = new AtomicInteger();
        Map<String, Integer> stops = new ConcurrentHashMap<>();
        List<Future<?>> threads = new ArrayList<>();
        long started = System.nanoTime();
        for (int t = 0; t < THREADS; t++) {
            Gate gate = gates.get(t % gates.size());
            threads.add(pool.submit(() -> {
                while (next.getAndIncrement() < KEYS) {
                    EffectKey key = zk.newKey();
                    try (Attempt attempt = gate.enter(key)) {
                        if (attempt.decision() instanceof Decision.Stop stop) {
                            stops.merge(stop.reason().wireName(), 1, Integer::sum);
                            continue;
                        }
                        Crossing crossing = attempt.cross(zk.provider().verified());
                        if (!(crossing instanceof Crossing.Crossed c && c.outcome() == Outcome.SENT_VERIFIED)) {
                            stops.merge("crossing " + crossing, 1, Integer::sum);
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> thread : threads) {
            thread.get(Timing.PROCESS.toMillis(), TimeUnit.MILLISECONDS);
        }
        System.out.printf("%d keys by %d threads on %d gate(s) in %d ms: %d delivered, stops %s%n", KEYS, THREADS,
                gates.size(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), zk.provider().deliveries(), stops);
        return stops;
    }
}
