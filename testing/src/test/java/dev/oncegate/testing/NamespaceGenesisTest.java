package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.StopReason;
import dev.oncegate.ZxidMarks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * SPEC §4.7 and §9 "unavailable history": lost ZooKeeper data never looks like a fresh start.
 * A namespace without its genesis record stops every contender, and writes nothing.
 */
class NamespaceGenesisTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void uninitialisedNamespace_stopsUnavailableAndWritesNothing() throws Exception {
        // Given a namespace nobody initialised
        String bare = Scenarios.freshNamespace();
        Worker w = zk.track(Worker.start(zk.connectString(), bare, "task-a", Timing.SESSION));

        // When a contender enters
        try (Attempt attempt = w.gate().enter(zk.key(), Timing.scaled(1_000))) {
            // Then it stops unavailable, saying to run init
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
                assertThat(s.reason()).isEqualTo(StopReason.NAMESPACE_NOT_INITIALISED);
                assertThat(s.evidence().path()).isEqualTo(bare + "/genesis");
                assertThat(s.evidence().detail()).contains("oncegate init");
            });
        }
        // and nothing at all was written under (or as) the namespace
        assertThat(w.client().checkExists().forPath(bare)).isNull();
        assertThat(zk.provider().deliveries()).isZero();
    }

    @Test
    void uninitialisedNamespaceWithInitializeAllowed_proceeds() throws Exception {
        // Given a bare namespace and a gate explicitly allowed to initialise it
        String bare = Scenarios.freshNamespace();
        Worker w = zk.track(Worker.start(zk.connectString(), bare, "task-a", Timing.SESSION,
                b -> b.initializeNamespace(true)));
        // When it enters, Then it writes genesis and proceeds
        try (Attempt attempt = w.gate().enter(zk.key())) {
            assertThat(attempt.decision().proceeds()).isTrue();
            attempt.cross(zk.provider().verified());
        }
        assertThat(w.client().checkExists().forPath(bare + "/genesis")).isNotNull();
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    /**
     * Allowed to initialise is not allowed to forget: a namespace this host's zxid marks saw before
     * and that is now empty lost its data (or was restored from an old snapshot). Initialising it
     * would let every key be delivered again, so the gate stops as one not allowed would.
     */
    @Test
    void namespaceThisHostSawBefore_emptiedSince_isNotInitialisedAgainByAGateAllowedTo(@TempDir Path state)
            throws Exception {
        // Given a namespace a gate allowed to initialise it initialised and delivered in, this host's marks in a file
        String bare = Scenarios.freshNamespace();
        Path marks = state.resolve("zxid-marks.json");
        EffectKey key = zk.key();
        Worker first = zk.track(Worker.start(zk.connectString(), bare, "task-a", Timing.SESSION,
                b -> b.initializeNamespace(true).zxidMarks(ZxidMarks.file(marks, zk.connectString()))));
        try (Attempt a = first.gate().enter(key)) {
            a.cross(zk.provider().verified());
        }
        String genesisId = new String(first.client().getData().forPath(bare + "/genesis"), StandardCharsets.UTF_8);

        // When the namespace is emptied, and a restarted worker of this host, allowed to initialise, enters the key
        first.client().delete().deletingChildrenIfNeeded().forPath(bare);
        Worker restarted = zk.track(Worker.start(zk.connectString(), bare, "task-b", Timing.SESSION,
                b -> b.initializeNamespace(true).zxidMarks(ZxidMarks.file(marks, zk.connectString()))));
        try (Attempt attempt = restarted.gate().enter(key)) {
            // Then it stops unavailable, naming the life of the namespace it saw, and writes no genesis
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
                assertThat(s.reason()).isEqualTo(StopReason.NAMESPACE_NOT_INITIALISED);
                assertThat(s.evidence().detail()).contains("this host saw it before");
            });
        }
        assertThat(genesisId).isNotEmpty();
        assertThat(restarted.client().checkExists().forPath(bare + "/genesis")).isNull();
        assertThat(zk.provider().deliveries()).isEqualTo(1);

        // And a namespace this host never saw is still initialised by such a gate
        String fresh = Scenarios.freshNamespace();
        Worker elsewhere = zk.track(Worker.start(zk.connectString(), fresh, "task-c", Timing.SESSION,
                b -> b.initializeNamespace(true).zxidMarks(ZxidMarks.file(marks, zk.connectString()))));
        try (Attempt attempt = elsewhere.gate().enter(zk.newKey())) {
            assertThat(attempt.decision().proceeds()).isTrue();
        }
    }

    @Test
    void genesisDeletedWhileGateRuns_nextEntryStopsUnavailable() throws Exception {
        // Given a running gate that already delivered one effect in this namespace
        Worker w = zk.newWorker("task-a");
        try (Attempt a = w.gate().enter(zk.key())) {
            a.cross(zk.provider().verified());
        }
        // When the namespace's genesis vanishes (data lost) and a second effect is entered
        w.client().delete().deletingChildrenIfNeeded().forPath(zk.namespace() + "/genesis");
        var other = zk.newKey();
        try (Attempt attempt = w.gate().enter(other)) {
            // Then the gate fails closed instead of treating the key as new
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.NAMESPACE_NOT_INITIALISED));
        }
        assertThat(w.client().checkExists().forPath(other.path(zk.namespace()))).isNull();
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void genesisDeletedBetweenProceedAndCross_crossingRefusedActionNeverRuns() throws Exception {
        // Given an executor that proceeded
        Worker w = zk.newWorker("task-a");
        Attempt attempt = zk.track(w.gate().enter(zk.key()));
        assertThat(attempt.decision().proceeds()).isTrue();
        // When the genesis vanishes before it crosses
        w.client().delete().deletingChildrenIfNeeded().forPath(zk.namespace() + "/genesis");
        Crossing crossing = attempt.cross(zk.provider().verified());
        // Then arming (which checks the genesis id) is refused and the action never ran
        Scenarios.assertRefused(crossing, Decision.StopUnavailable.class, StopReason.NAMESPACE_REPLACED);
        assertThat(zk.provider().deliveries()).isZero();
        assertThat(Scenarios.armedNode(w.client(), zk.keyPath() + "/0")).isNull();
    }

    @Test
    void genesisReplacedWhileGateRuns_nextEntryStopsNamespaceReplaced() throws Exception {
        // Given a running gate that saw this namespace's genesis
        Worker w = zk.newWorker("task-a");
        try (Attempt a = w.gate().enter(zk.key())) {
            a.cross(zk.provider().verified());
        }
        // When the namespace is wiped and initialised again (a new genesis id)
        w.client().delete().deletingChildrenIfNeeded().forPath(zk.namespace());
        Gate.initialize(w.client(), zk.namespace());
        // Then the running gate refuses it, rather than deliver the (now forgotten) effect again
        try (Attempt attempt = w.gate().enter(zk.key())) {
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.NAMESPACE_REPLACED));
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(w.client().checkExists().forPath(zk.keyPath())).isNull();
    }
}
