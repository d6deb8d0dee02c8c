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
import dev.oncegate.Genesis;
import dev.oncegate.Operator;
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
class RollbackDetectionTest extends RestoreFixture {

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
    void restoredFromAnOlderSnapshot_theStopHolds_howeverManyAttemptsMoveTheRestoredEnsembleOn() throws Exception {
        // Given a host that delivered the effect, and a few others, after a backup was taken
        Path file = marksDir.resolve("zxid-marks.json");
        backUp();
        deliver(zk.key(), ZxidMarks.file(file, zk.connectString()));
        for (int i = 0; i < 4; i++) {
            deliver(zk.newKey(), ZxidMarks.file(file, zk.connectString()));
        }
        restore();

        // When its workers keep trying: each refused attempt writes (its session, the key, its election node, its
        // lease), so the restored ensemble's zxids soon pass the host's mark
        List<String> decisions = retry(zk.key(), file, 30);

        // Then every attempt stops, the key the restore forgot is not delivered again, and the file keeps the verdict
        assertThat(decisions).as("decisions after the restore").containsOnly("zookeeper_rolled_back").hasSize(30);
        assertThat(zk.provider().deliveriesOf(zk.key().key())).isEqualTo(1);
        assertThat(Files.readString(file)).contains("\"rolled_back\"");
    }

    @Test
    void restoreAccepted_byTheAdmin_theHostsWorkersProceedAgain_andALaterRestoreIsCaughtAgain() throws Exception {
        // Given a host that caught a restore
        Path file = marksDir.resolve("zxid-marks.json");
        backUp();
        deliver(zk.key(), ZxidMarks.file(file, zk.connectString()));
        deliver(zk.newKey(), ZxidMarks.file(file, zk.connectString()));
        restore();
        assertThat(retry(zk.key(), file, 2)).containsOnly("zookeeper_rolled_back");

        // When the admin, having reconciled, accepts the restore
        Genesis accepted = Gate.acceptRestore(zk.newClient(), zk.namespace(), ZxidMarks.inMemory());
        assertThat(accepted.restoresAccepted()).isEqualTo(1);

        // Then the host's next worker proceeds (the forgotten key is the operator's decision to let through)
        assertThat(retry(zk.key(), file, 1)).containsExactly("proceed");
        assertThat(zk.provider().deliveriesOf(zk.key().key())).isEqualTo(2);

        // And a later restore, to a snapshot taken after the acceptance, is caught again, and holds
        EffectKey later = zk.newKey();
        backUp();
        deliver(later, ZxidMarks.file(file, zk.connectString()));
        for (int i = 0; i < 3; i++) {
            deliver(zk.newKey(), ZxidMarks.file(file, zk.connectString()));
        }
        restore();
        assertThat(retry(later, file, 20)).containsOnly("zookeeper_rolled_back");
        assertThat(zk.provider().deliveriesOf(later.key())).isEqualTo(1);
    }

    @Test
    void restoreAccepted_aHostThatHadNotTriedSinceTheRestore_proceeds_withoutStoppingFirst() throws Exception {
        // Given two hosts that saw the later state; only one of them tried (and stopped) after the restore
        Path caught = marksDir.resolve("caught/zxid-marks.json");
        Path idle = marksDir.resolve("idle/zxid-marks.json");
        backUp();
        deliver(zk.key(), ZxidMarks.file(caught, zk.connectString()));
        deliver(zk.newKey(), ZxidMarks.file(idle, zk.connectString()));
        restore();
        assertThat(retry(zk.key(), caught, 1)).containsOnly("zookeeper_rolled_back");

        // When the admin accepts the restore
        Gate.acceptRestore(zk.newClient(), zk.namespace(), ZxidMarks.inMemory());

        // Then the idle host's workers proceed too: its marks belong to the namespace's life before the acceptance
        assertThat(retry(zk.newKey(), idle, 1)).containsExactly("proceed");
    }

    @Test
    void restoredToBeforeAnAcceptance_aHostThatKnewTheAcceptanceStops() throws Exception {
        // Given a backup taken before an acceptance that a host then worked under
        Path file = marksDir.resolve("zxid-marks.json");
        deliver(zk.newKey(), ZxidMarks.file(file, zk.connectString()));
        backUp();
        Gate.acceptRestore(zk.newClient(), zk.namespace(), ZxidMarks.inMemory());
        deliver(zk.key(), ZxidMarks.file(file, zk.connectString()));

        // When the ensemble is restored from that backup (the acceptance is forgotten)
        restore();

        // Then the host's workers stop, while its operator commands still read the records to reconcile
        assertThat(retry(zk.key(), file, 5)).containsOnly("zookeeper_rolled_back");
        assertThat(zk.provider().deliveriesOf(zk.key().key())).isEqualTo(1);
        Operator operator = Operator.builder(zk.newClient()).namespace(zk.namespace())
                .zxidMarks(ZxidMarks.file(file, zk.connectString())).build();
        assertThat(operator.inspect(zk.key().key()).state()).as("the restore forgot the key, and the stopped attempts"
                + " wrote nothing").isNull();

        // And once the admin accepts this restore too (which counts to the number the host knew, as another acceptance),
        // they proceed: the acceptance is a new life of the witness, not the one the host worked in
        Genesis accepted = Gate.acceptRestore(zk.newClient(), zk.namespace(), ZxidMarks.inMemory());
        assertThat(accepted.restoresAccepted()).isEqualTo(1);
        assertThat(retry(zk.key(), file, 1)).containsExactly("proceed");
    }

    @Test
    void dataLost_andANewGenesisWrittenAutomatically_aHostThatKnewTheOldLifeStops_untilTheAdminAcceptsIt()
            throws Exception {
        // Given a host that delivered the effect in the namespace's first life
        Path file = marksDir.resolve("host/zxid-marks.json");
        deliver(zk.key(), ZxidMarks.file(file, zk.connectString()));

        // When the data is lost and a server with a state directory of its own (lost with it) writes a new genesis
        loseTheDataAndReinitialise(true);

        // Then the host's new workers do not take it for a fresh start, and write nothing
        assertThat(retry(zk.key(), file, 3)).containsOnly("namespace_replaced");
        assertThat(zk.provider().deliveriesOf(zk.key().key())).isEqualTo(1);
        assertThat(zk.newClient().checkExists().forPath(zk.keyPath())).isNull();

        // And once the admin, having reconciled, accepts it, they proceed
        Gate.acceptRestore(zk.newClient(), zk.namespace(), ZxidMarks.inMemory());
        assertThat(retry(zk.key(), file, 1)).containsExactly("proceed");
    }

    @Test
    void dataLost_andANewGenesisWrittenByInit_isTheAdminsDecision_theHostProceeds() throws Exception {
        Path file = marksDir.resolve("host/zxid-marks.json");
        deliver(zk.newKey(), ZxidMarks.file(file, zk.connectString()));

        loseTheDataAndReinitialise(false);

        assertThat(retry(zk.key(), file, 1)).containsExactly("proceed");
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

    @Test
    void restoredWhileTheMarksFileHoldsAnEntryItCannotParse_theIntactMarkStillStopsTheWorker_andTheEntryIsKept()
            throws Exception {
        // Given a host whose marks file holds this namespace's mark from a delivery after the backup...
        Path file = marksDir.resolve("zxid-marks.json");
        backUp();
        deliver(zk.key(), ZxidMarks.file(file, zk.connectString()));
        // ...and, added since by another process, another namespace's mark and an entry of a later format
        String foreign = "{\"namespace\":\"/later\",\"genesis\":\"g7\",\"zxid\":\"0x2a\",\"v\":2}";
        String other = "{\"namespace\":\"/other\",\"genesis\":\"g9\",\"zxid\":77,\"seen_at\":[\"zk9:2181\"],"
                + "\"updated\":\"2024-01-02T03:04:05Z\"}";
        String written = Files.readString(file);
        Files.writeString(file, written.replace("\"marks\":[", "\"marks\":[" + foreign + "," + other + ","));

        // When the ensemble is restored from the backup
        restore();

        // Then a new process of that host stops at its lease write, by the intact mark
        try (Worker b = worker("task-b", ZxidMarks.file(file, zk.connectString()));
             Attempt attempt = b.gate().enter(zk.key())) {
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.ZOOKEEPER_ROLLED_BACK));
        }
        assertThat(zk.provider().deliveriesOf(zk.key().key())).isEqualTo(1);
        // And its flushes kept the later entry byte for byte and the other namespace's mark
        ZxidMarks again = ZxidMarks.file(file, "127.0.0.1:1");
        again.observe("/other-still", "g1", 5);
        again.flush();
        assertThat(Files.readString(file)).contains(foreign, other);
        assertThat(ZxidMarks.read(file)).extracting(ZxidMarks.Mark::namespace)
                .containsExactlyInAnyOrder(zk.namespace(), "/other", "/other-still");
    }

    @Test
    void marksFileUnreadable_everyAttemptStopsUnavailable_theFileIsLeftAlone_untilItIsRepaired() throws Exception {
        // Given a host whose marks file is not JSON (a torn copy, a hand edit gone wrong)
        Path file = marksDir.resolve("zxid-marks.json");
        Files.writeString(file, "{\"v\":1,\"marks\":[{\"namespace\":");
        byte[] before = Files.readAllBytes(file);

        // When a worker of that host enters a key
        try (Worker w = worker("task-a", ZxidMarks.file(file, zk.connectString()))) {
            try (Attempt attempt = w.gate().enter(zk.key())) {

                // Then it stops before anything is written, saying what is wrong and what to do
                assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
                    assertThat(s.reason().wireName()).isEqualTo("marks_unreadable");
                    assertThat(s.evidence().detail()).startsWith("marks file unreadable: " + file)
                            .contains("rollback").contains("move it aside");
                });
            }
            assertThat(w.client().checkExists().forPath(zk.keyPath())).as("the key was never created").isNull();

            // And once an operator moved the file aside, the next attempt proceeds
            Files.move(file, marksDir.resolve("zxid-marks.json.broken"));
            try (Attempt attempt = w.gate().enter(zk.key())) {
                assertThat(attempt.decision()).isInstanceOf(Decision.Proceed.class);
                attempt.cross(zk.provider().verified());
            }
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(marksDir.resolve("zxid-marks.json.broken")).as("the unreadable file was never rewritten")
                .hasBinaryContent(before);
        assertThat(ZxidMarks.read(file)).singleElement().satisfies(m -> assertThat(m.namespace()).isEqualTo(zk.namespace()));
    }

    @Test
    void marksFileUnwritable_theAttemptStopsBeforeArming_andProceedsOnceItCanBeWrittenAgain() throws Exception {
        // Given a host whose marks file can be read but not written (here its lock file is a directory, which stops
        // root too; a full disk or a read-only directory does the same)
        Path file = marksDir.resolve("zxid-marks.json");
        Path lock = Files.createDirectory(marksDir.resolve("zxid-marks.json.lock"));

        // When a worker of that host enters a key
        try (Worker w = worker("task-a", ZxidMarks.file(file, zk.connectString()))) {
            try (Attempt attempt = w.gate().enter(zk.key())) {

                // Then it stops before arming, unavailable, saying the witness cannot be written: a later process of
                // this host would not know what this one saw, and a restore would go unseen
                assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
                    assertThat(s.reason().wireName()).isEqualTo("marks_unreadable");
                    assertThat(s.evidence().detail()).startsWith("marks file cannot be written: " + file);
                });
            }
            assertThat(zk.provider().deliveries()).isZero();

            // And once the file can be written again, the next attempt proceeds, and its mark is on the file
            Files.delete(lock);
            try (Attempt attempt = w.gate().enter(zk.key())) {
                assertThat(attempt.decision()).isInstanceOf(Decision.Proceed.class);
                attempt.cross(zk.provider().verified());
            }
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(ZxidMarks.read(file)).singleElement().satisfies(m -> assertThat(m.namespace()).isEqualTo(zk.namespace()));
    }

    @Test
    void marksFileUnreadable_aFlushNeverOverwritesIt() throws Exception {
        // Given marks whose file turned unreadable after they were loaded
        Path file = marksDir.resolve("zxid-marks.json");
        ZxidMarks marks = ZxidMarks.file(file, zk.connectString());
        Files.writeString(file, "not json at all");

        // When a worker delivers through them (a flush after its lease write finds the file unreadable)
        try (Worker w = worker("task-a", marks); Attempt attempt = w.gate().enter(zk.key())) {

            // Then it stops at its lease write, and the file is as it was
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class,
                    s -> assertThat(s.reason().wireName()).isEqualTo("marks_unreadable"));
        }
        assertThat(file).hasContent("not json at all");
        assertThat(zk.provider().deliveries()).isZero();
    }
}
