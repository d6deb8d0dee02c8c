package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.StopReason;
import dev.oncegate.ZxidMarks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rollback detection: an ensemble restored from an older snapshot keeps its genesis but forgets
 * the outcomes recorded after it. A gate whose witness ({@link ZxidMarks}) saw a later zxid stops
 * with {@code zookeeper_rolled_back} at its lease write, before any arming; a gate with no witness
 * cannot tell, and that limit is pinned here too.
 */
class RollbackDetectionTest {

    /** A server per test: each one puts old data back into it. */
    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone().perTest();

    @TempDir
    Path backup;

    Worker worker(String task, ZxidMarks marks) {
        return zk.newWorker(task, b -> b.zxidMarks(marks));
    }

    /** Delivers {@code k} once through a worker with the given witness. */
    void deliver(EffectKey k, ZxidMarks marks) throws InterruptedException {
        try (Worker w = worker("task-a", marks); Attempt a = w.gate().enter(k)) {
            assertThat(a.decision().proceeds()).isTrue();
            a.cross(zk.provider().verified());
        }
    }

    /** Snapshot of the server's files taken while it is stopped; {@link #restore} puts them back. */
    void backUp() {
        zk.server().stop();
        Scratch.copyTree(dataDir(), backup);
        zk.server().restart();
    }

    void restore() {
        zk.server().stop();
        delete(dataDir());
        Scratch.copyTree(backup, dataDir());
        zk.server().restart();
    }

    Path dataDir() {
        return zk.server().server().getTempDirectory().toPath();
    }

    @Test
    void restoredFromAnOlderSnapshot_aWitnessedHostStopsBeforeArming() throws Exception {
        // Given a host that delivered the effect (and a few others) after a backup was taken
        ZxidMarks host = ZxidMarks.inMemory();
        backUp();
        deliver(zk.key(), host);
        for (int i = 0; i < 4; i++) {
            deliver(zk.newKey(), host);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(5);

        // When the ensemble is restored from that backup (the outcome is forgotten, the genesis is the same)
        restore();

        // Then a new worker on that host stops at its lease write: the ensemble is behind what it saw
        try (Worker b = worker("task-b", host); Attempt attempt = b.gate().enter(zk.key())) {
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
                assertThat(s.reason()).isEqualTo(StopReason.ZOOKEEPER_ROLLED_BACK);
                assertThat(s.evidence().detail()).contains("restored from an older snapshot");
            });
            assertThat(Scenarios.armedNode(b.client(), zk.keyPath() + "/0")).isNull();
            assertThat(b.gate().inspect(zk.key().key()).scopes().get(0).lease())
                    .as("the lease it took was released").isNull();
        }
        assertThat(zk.provider().deliveriesOf(zk.key().key())).isEqualTo(1);
    }

    @Test
    void restoredFromAnOlderSnapshot_aHostThatNeverSawTheLaterState_cannotTell() throws Exception {
        // The limit the README states: detection needs a witness of the later state.
        backUp();
        deliver(zk.key(), ZxidMarks.inMemory());
        restore();

        try (Worker fresh = worker("task-new-host", ZxidMarks.inMemory()); Attempt attempt = fresh.gate().enter(zk.key())) {
            assertThat(attempt.decision()).isInstanceOf(Decision.Proceed.class);
        }
    }

    static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                if (!p.equals(dir)) {
                    Files.delete(p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
