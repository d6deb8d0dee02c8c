package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An interrupt before arming consumes nothing: with the interrupt flag already set, ZooKeeper
 * would queue the arming multi and throw at once, leaving the key armed while the action never
 * runs. The crossing checks the flag immediately before sending the arm.
 */
class InterruptBeforeArmingTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void interruptedExecutor_crossThrows_nothingIsArmed_andTheNextContenderDeliversAtOnce() throws Exception {
        Worker a = zk.newWorker("task-a");
        try (Attempt attempt = a.gate().enter(zk.key())) {
            assertThat(attempt.decision().proceeds()).isTrue();
            // Given the executor's thread is interrupted (a SIGTERM between deciding and crossing)
            Thread.currentThread().interrupt();
            try {
                // When it crosses, Then it refuses with InterruptedException and invokes nothing
                assertThatThrownBy(() -> attempt.cross(zk.provider().verified())).isInstanceOf(InterruptedException.class);
                assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept for the caller").isTrue();
            } finally {
                Thread.interrupted();
            }
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.INTERRUPTED));
        }
        // and the scope is neither armed nor leased: the next contender proceeds without waiting
        String scope0 = zk.keyPath() + "/0";
        assertThat(Scenarios.armedNode(a.client(), scope0)).isNull();
        assertThat(a.gate().inspect(zk.key().key()).scopes().get(0).lease()).isNull();
        try (Attempt b = zk.newGate("task-b").enter(zk.key())) {
            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
            b.cross(zk.provider().verified());
        }
        assertThat(zk.provider().ledger()).singleElement().satisfies(d -> assertThat(d.taskId()).isEqualTo("task-b"));
    }
}
