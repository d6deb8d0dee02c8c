package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.ZxidMarks;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the rollback witness's tests share: a server per test that a test backs up and later
 * restores from that backup (its genesis kept, what came after forgotten), workers of one host
 * whose zxid marks are a file, and attempts that cross whenever they proceed. Not thread-safe: one
 * per test.
 */
abstract class RestoreFixture {

    /** A server per test: each one puts old data back into it. */
    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone().perTest();

    @TempDir
    Path backup;

    @TempDir
    Path marksDir;

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

    /** One attempt at {@code k} through {@code gate}, which crosses when it proceeds: "proceed", or the stop's reason. */
    static String attempt(Gate gate, EffectKey k) throws InterruptedException {
        try (Attempt a = gate.enter(k)) {
            Decision d = a.decision();
            if (d.proceeds()) {
                a.cross(zk.provider().verified());
                return "proceed";
            }
            return d instanceof Decision.Stop s ? s.reason().wireName() : d.toString();
        }
    }

    /** {@code rounds} attempts at {@code k}, each a new process of the host (its own session, the host's marks file). */
    List<String> retry(EffectKey k, Path file, int rounds) throws InterruptedException {
        List<String> decisions = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            try (Worker w = worker("retry-" + i, ZxidMarks.file(file, zk.connectString()))) {
                decisions.add(attempt(w.gate(), k));
            }
        }
        return decisions;
    }

    /** Snapshot of the server's files taken while it is stopped (replacing any earlier one); {@link #restore} puts them back. */
    void backUp() {
        zk.server().stop();
        delete(backup); // a test may take a second one
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

    /** The namespace's data lost, and a new genesis written (as {@code oncegate server} does on an empty data directory when {@code automatic}). */
    void loseTheDataAndReinitialise(boolean automatic) throws Exception {
        var admin = zk.newClient();
        admin.delete().deletingChildrenIfNeeded().forPath(zk.namespace());
        Gate.Initialization init = Gate.initialize(admin, zk.namespace(), null,
                ZxidMarks.file(marksDir.resolve("server-state/zxid-marks.json"), zk.connectString()), automatic);
        assertThat(init.created()).isTrue();
        assertThat(init.genesis().automatic()).isEqualTo(automatic);
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
