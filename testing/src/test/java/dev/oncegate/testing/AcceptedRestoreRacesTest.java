package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.ZxidMarks;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kept rollback verdict and the admin's acceptance where processes, threads and releases meet:
 * a long-lived gate and a verdict another process of the host found; a long-lived gate across a
 * restore to before a genesis write; a genesis rewritten by a release that reads schema 2 only;
 * two threads of one gate pinning an automatic genesis; concurrent flushes of one marks file.
 * (Written by a review of the verdict and acceptance, each failing before its fix but the last.)
 */
class AcceptedRestoreRacesTest extends RestoreFixture {

    /** The data lost, and a new genesis written as {@code oncegate server} writes one on an empty data directory. */
    void loseTheDataAndReinitialiseAutomatically() throws Exception {
        loseTheDataAndReinitialise(true);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // A long-lived gate (sidecar, embedding library) reads the verdict another process of the host kept

    @Test
    void aLongLivedGate_stopsOnTheVerdictAnotherProcessOfTheHostKept_andDoesNotDeliverAForgottenKeyAgain() throws Exception {
        Path file = marksDir.resolve("zxid-marks.json");
        try (Worker sidecar = worker("sidecar", ZxidMarks.file(file, zk.connectString()))) {
            // the sidecar has been running (and has pinned the genesis) since before the backup
            assertThat(attempt(sidecar.gate(), zk.newKey())).isEqualTo("proceed");
            backUp();
            // other processes of the same host deliver the key (and a few others) after the backup
            deliver(zk.key(), ZxidMarks.file(file, zk.connectString()));
            for (int i = 0; i < 4; i++) {
                deliver(zk.newKey(), ZxidMarks.file(file, zk.connectString()));
            }
            restore();
            // another process of the host catches the restore and keeps the verdict in the shared file
            assertThat(retry(zk.newKey(), file, 1)).containsExactly("zookeeper_rolled_back");
            assertThat(Files.readString(file)).contains("\"rolled_back\"");

            // "every later attempt of that process or host stops, before it writes anything"
            String d = attempt(sidecar.gate(), zk.key());
            assertThat(zk.provider().deliveriesOf(zk.key().key())).as("sidecar decision: " + d).isEqualTo(1);
        }
    }

    @Test
    void aLongLivedGateHoldingTheVerdict_writesItBack_whenTheFileLostIt_thoughItsMarksNeverRiseAgain() throws Exception {
        Path file = marksDir.resolve("zxid-marks.json");
        Path older = marksDir.resolve("zxid-marks.json.older");
        try (Worker sidecar = worker("sidecar", ZxidMarks.file(file, zk.connectString()))) {
            assertThat(attempt(sidecar.gate(), zk.newKey())).isEqualTo("proceed");
            Files.copy(file, older); // e.g. the state directory's nightly backup
            backUp();
            assertThat(attempt(sidecar.gate(), zk.key())).isEqualTo("proceed"); // delivered after the backup
            for (int i = 0; i < 3; i++) {
                assertThat(attempt(sidecar.gate(), zk.newKey())).isEqualTo("proceed");
            }
            restore(); // the ensemble forgets zk.key()'s delivery
            EffectKey next = zk.newKey();
            assertThat(await().atMost(Timing.WAIT).until(() -> attempt(sidecar.gate(), next),
                    d -> !d.equals("connection_lost") && !d.equals("zookeeper_unreachable"))) // reconnected after the restart
                    .isEqualTo("zookeeper_rolled_back");
            assertThat(Files.readString(file)).contains("\"rolled_back\"");

            // the host's state directory is put back from its backup (or the file moved aside), the sidecar running
            Files.copy(older, file, StandardCopyOption.REPLACE_EXISTING);
            // the sidecar goes on stopping (it knows the verdict), and never writes
            assertThat(attempt(sidecar.gate(), zk.key())).isEqualTo("zookeeper_rolled_back");
            assertThat(attempt(sidecar.gate(), zk.newKey())).isEqualTo("zookeeper_rolled_back");
        } // its gate closes, flushing

        String onFile = Files.readString(file);
        // a new process of the host
        List<String> later = retry(zk.key(), file, 1);
        assertThat(zk.provider().deliveriesOf(zk.key().key()))
                .as("new process: " + later + "; file after the sidecar closed: " + onFile).isEqualTo(1);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // A long-lived gate across a restore to before a genesis write: the admin's acceptance then lands at a genesis
    // version the gate saw before, and it must take it all the same.

    @Test
    void aLongLivedGate_restoredToBeforeAGenesisWrite_runsAgainOnceTheAdminAccepts() throws Exception {
        Path file = marksDir.resolve("zxid-marks.json");
        try (Worker sidecar = worker("sidecar", ZxidMarks.file(file, zk.connectString()))) {
            assertThat(attempt(sidecar.gate(), zk.newKey())).isEqualTo("proceed");
            backUp(); // genesis at version 0
            // a genesis write after the backup (here an earlier acceptance; an `oncegate acl` rotation does the same)
            Gate.acceptRestore(zk.newClient(), zk.namespace(), ZxidMarks.inMemory()); // version 1
            assertThat(attempt(sidecar.gate(), zk.key())).isEqualTo("proceed");
            for (int i = 0; i < 3; i++) {
                assertThat(attempt(sidecar.gate(), zk.newKey())).isEqualTo("proceed");
            }
            restore(); // genesis back at version 0
            String caught = attempt(sidecar.gate(), zk.key());
            assertThat(caught).isNotEqualTo("proceed");

            // the admin reconciles and accepts, as the runbook says: genesis version 1 again (another acceptance id)
            Gate.acceptRestore(zk.newClient(), zk.namespace(), ZxidMarks.inMemory());

            // a new process of the host proceeds...
            assertThat(retry(zk.newKey(), file, 1)).containsExactly("proceed");
            // ...and so should the long-lived one ("each host's next attempt reads it ... and runs again")
            List<String> sidecarAfter = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                sidecarAfter.add(attempt(sidecar.gate(), zk.newKey()));
            }
            assertThat(sidecarAfter).as("first stop: " + caught).containsOnly("proceed");
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // A release that reads genesis schema 2 only would skip the new fields, and its `oncegate acl` would rewrite the
    // genesis without them (an automatic genesis would become a fresh start; an accepted one, a restore): a genesis
    // with them is schema 3, which such a release refuses (fails closed) before it could rewrite anything.

    static long schemaOf(CuratorFramework client, String namespace) throws Exception {
        String json = new String(client.getData().forPath(namespace + "/genesis"), StandardCharsets.UTF_8);
        return Long.parseLong(json.replaceAll("^\\{\"v\":(\\d+),.*", "$1"));
    }

    @Test
    void aGenesisWithAnAcceptanceOrWrittenAutomatically_isSchema3_andAPlainOneStaysSchema2() throws Exception {
        CuratorFramework client = zk.newClient();
        assertThat(schemaOf(client, zk.namespace())).as("written by init").isEqualTo(2);
        Gate.acceptRestore(client, zk.namespace(), ZxidMarks.inMemory());
        assertThat(schemaOf(client, zk.namespace())).as("an acceptance counted").isEqualTo(3);

        loseTheDataAndReinitialiseAutomatically();
        assertThat(schemaOf(client, zk.namespace())).as("written automatically").isEqualTo(3);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // What a gate learns when it pins the genesis (the other lives its host knew, the acceptances) is known before the
    // pin: a second thread of a shared gate that finds the genesis pinned stops on it too.

    /** File marks whose lives() is slow (a slow disk, a large file): widens the window between the pin and its checks. */
    static final class SlowLives implements ZxidMarks {
        final ZxidMarks d;
        final CountDownLatch inLives = new CountDownLatch(1);

        SlowLives(ZxidMarks d) {
            this.d = d;
        }

        public long highest(String ns, String g) {
            return d.highest(ns, g);
        }

        public void observe(String ns, String g, long z) {
            d.observe(ns, g, z);
        }

        public void flush() {
            d.flush();
        }

        public Optional<String> unreadable() {
            return d.unreadable();
        }

        public Set<String> lives(String ns) {
            inLives.countDown();
            try {
                Thread.sleep(1500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return d.lives(ns);
        }

        public Optional<Rollback> rolledBack(String ns, String life) {
            return d.rolledBack(ns, life);
        }

        public void rolledBack(String ns, String life, Rollback r) {
            d.rolledBack(ns, life, r);
        }
    }

    @Test
    void aSharedGate_aSecondThreadWhileTheFirstPinsAnAutomaticGenesis_stopsToo() throws Exception {
        Path file = marksDir.resolve("host/zxid-marks.json");
        deliver(zk.key(), ZxidMarks.file(file, zk.connectString()));
        loseTheDataAndReinitialiseAutomatically();

        SlowLives marks = new SlowLives(ZxidMarks.file(file, zk.connectString()));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (Worker w = worker("shared", marks)) {
            Future<String> first = pool.submit(() -> attempt(w.gate(), zk.newKey()));
            assertThat(marks.inLives.await(10, TimeUnit.SECONDS)).isTrue(); // the first thread has pinned the genesis
            Future<String> second = pool.submit(() -> attempt(w.gate(), zk.key()));
            String a = first.get(30, TimeUnit.SECONDS);
            String b = second.get(30, TimeUnit.SECONDS);
            assertThat(List.of(a, b)).as("first, second").containsOnly("namespace_replaced");
        } finally {
            pool.shutdownNow();
        }
        assertThat(zk.provider().deliveriesOf(zk.key().key())).isEqualTo(1);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Concurrent flushers of one file keep a verdict and every mark
    @Test
    void concurrentFlushersOfOneFile_keepTheVerdict_andEveryMark() throws Exception {
        Path file = marksDir.resolve("conc/zxid-marks.json");
        int n = 8;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < n; t++) {
                int me = t;
                fs.add(pool.submit(() -> {
                    ZxidMarks m = ZxidMarks.file(file, "h" + me);
                    for (int i = 1; i <= 200; i++) {
                        m.observe("/ns", "L", me * 1000 + i);
                        m.observe("/ns" + me, "L", i);
                        if (me == 3 && i == 50) {
                            m.rolledBack("/ns", "L", new ZxidMarks.Rollback(99, 7, java.time.Instant.now()));
                        }
                        m.flush();
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        ZxidMarks after = ZxidMarks.file(file, "reader");
        assertThat(after.rolledBack("/ns", "L")).isPresent();
        assertThat(after.highest("/ns", "L")).isEqualTo((n - 1) * 1000 + 200);
        for (int t = 0; t < n; t++) {
            assertThat(after.highest("/ns" + t, "L")).isEqualTo(200);
        }
    }

    // (d) a file moved aside / lost while a process holds a verdict: that process never writes the verdict again
}
