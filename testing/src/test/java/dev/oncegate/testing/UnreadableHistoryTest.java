package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** SPEC §9 "unreadable history": any record the gate cannot parse stops contenders with unavailable. */
class UnreadableHistoryTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final byte[] GARBAGE = {(byte) 0xff, 0x00, '{', 'n', 'o', 't', ' ', 'j', 's', 'o', 'n'};

    /** An entered-and-released key: scope 0 exists, open, no lease. */
    private Worker keyWithOpenScope() throws Exception {
        Worker w = zk.newWorker("task-a");
        try (Attempt a = w.gate().enter(zk.key())) {
            assertThat(a.decision().proceeds()).isTrue();
        }
        assertThat(w.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.OPEN);
        return w;
    }

    private void assertUnreadable(Worker w, String path) throws Exception {
        try (Attempt attempt = w.gate().enter(zk.key(), Timing.scaled(1_000))) {
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
                assertThat(s.reason()).isEqualTo(StopReason.UNREADABLE_RECORD);
                assertThat(s.evidence().path()).isEqualTo(path);
            });
        }
    }

    @Test
    void garbageScopeRecord_stopsUnavailableUnreadable() throws Exception {
        // Given scope 0's data was overwritten with bytes that are not a record
        Worker w = keyWithOpenScope();
        w.client().setData().forPath(zk.keyPath() + "/0", GARBAGE);
        // When a contender enters, Then it fails closed and the action never runs
        assertUnreadable(zk.newWorker("task-b"), zk.keyPath() + "/0");
        assertThat(zk.provider().deliveries()).isZero();
        assertThat(Scenarios.read(w.client(), zk.keyPath() + "/0")).isEqualTo(GARBAGE);
        assertThat(Scenarios.armedNode(w.client(), zk.keyPath() + "/0")).isNull();
    }

    @Test
    void garbageKeyRecord_stopsUnavailableUnreadable() throws Exception {
        Worker w = keyWithOpenScope();
        w.client().setData().forPath(zk.keyPath(), GARBAGE);
        assertUnreadable(zk.newWorker("task-b"), zk.keyPath());
        assertThat(zk.provider().deliveries()).isZero();
        assertThat(Scenarios.armedNode(w.client(), zk.keyPath() + "/0")).isNull();
    }

    @Test
    void keyRecordNamingAnotherEffect_stopsUnavailableUnreadable() throws Exception {
        Worker w = keyWithOpenScope();
        String other = new String(Scenarios.read(w.client(), zk.keyPath()), StandardCharsets.UTF_8)
                .replace(zk.key().sha256(), "0".repeat(64));
        w.client().setData().forPath(zk.keyPath(), other.getBytes(StandardCharsets.UTF_8));
        assertUnreadable(zk.newWorker("task-b"), zk.keyPath());
        assertThat(zk.provider().deliveries()).isZero();
    }

    @Test
    void garbageOutcomeRecord_stopsUnavailableNotSentOrProceed() throws Exception {
        // Given a delivered key whose outcome record was damaged
        Worker w = zk.newWorker("task-a");
        try (Attempt a = w.gate().enter(zk.key())) {
            a.cross(zk.provider().verified());
        }
        w.client().setData().forPath(zk.keyPath() + "/0/armed/outcome", GARBAGE);
        // When a contender enters, Then it fails closed (it may not guess sent, and must not proceed)
        assertUnreadable(zk.newWorker("task-b"), zk.keyPath() + "/0/armed/outcome");
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void scopeSaysArmedWithoutArmedZnode_stopsUnavailableUnreadable() throws Exception {
        // Given scope 0 claims to be armed, but its armed znode is missing (a contradiction)
        Worker w = keyWithOpenScope();
        String armed = new String(Scenarios.read(w.client(), zk.keyPath() + "/0"), StandardCharsets.UTF_8)
                .replace("\"h\":null", "\"a\":true,\"h\":null"); // holder none, armed true (schema 3's names)
        assertThat(armed).contains("\"a\":true");
        w.client().setData().forPath(zk.keyPath() + "/0", armed.getBytes(StandardCharsets.UTF_8));
        assertUnreadable(zk.newWorker("task-b"), zk.keyPath() + "/0");
        assertThat(zk.provider().deliveries()).isZero();
    }

    @Test
    void unreadableRecord_inspectShowsIt_besideTheRestOfTheStory() throws Exception {
        // Given a damaged scope record, When an operator inspects
        Worker w = keyWithOpenScope();
        w.client().setData().forPath(zk.keyPath() + "/0", GARBAGE);
        dev.oncegate.KeyHistory history = w.gate().inspect(zk.key().key());

        // Then inspect names the record, its bytes, the problem and the repair, and hides nothing else
        assertThat(history.readable()).isFalse();
        assertThat(history.record()).as("the key record still reads").isNotNull();
        assertThat(history.unreadable()).singleElement().satisfies(u -> {
            assertThat(u.path()).isEqualTo(zk.keyPath() + "/0");
            assertThat(u.raw()).isEqualTo(GARBAGE);
            assertThat(u.problem()).isNotBlank();
            assertThat(u.repair()).contains("do not delete it");
        });
        assertThat(history.scopes()).singleElement().satisfies(s -> assertThat(s.state()).isNull());
        assertThat(history.nextAttempt()).contains("stop unavailable").contains(zk.keyPath() + "/0");
        assertThat(history.nextStop()).isInstanceOfSatisfying(Decision.StopUnavailable.class, stop -> {
            assertThat(stop.reason()).isEqualTo(StopReason.UNREADABLE_RECORD);
            assertThat(stop.evidence().path()).isEqualTo(zk.keyPath() + "/0");
        });
    }
}
