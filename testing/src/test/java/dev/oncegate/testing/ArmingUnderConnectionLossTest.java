package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §4.1/§4.4 and §9 "an executor crashing during the arming write": the server applies
 * the arming multi but the reply is lost. That counts as armed; the action is never invoked.
 */
class ArmingUnderConnectionLossTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standaloneWithAmbiguousWrites();

    Worker a;
    Worker b;

    @BeforeEach
    void fresh() {
        a = zk.newWorker("task-a");
        b = zk.newWorker("task-b");
    }

    @Test
    void armingReplyLost_crossingRefusedWriteResultUnknownAndActionNeverInvoked() throws Exception {
        // Given executor A proceeded, and the server will drop the reply to the next arming multi
        Attempt attempt = a.gate().enter(zk.key());
        assertThat(attempt.decision().proceeds()).isTrue();
        int droppedBefore = AmbiguousWriteCnxnFactory.dropped();
        AmbiguousWriteCnxnFactory.dropNextArmingReply();

        // When A crosses
        AtomicInteger invoked = new AtomicInteger();
        Crossing crossing = attempt.cross(ctx -> {
            invoked.incrementAndGet();
            return zk.provider().verified().deliver(ctx);
        });
        attempt.close();

        // Then the crossing is refused with write_result_unknown and the action never ran
        assertThat(AmbiguousWriteCnxnFactory.dropped()).isEqualTo(droppedBefore + 1);
        Scenarios.assertRefused(crossing, Decision.StopUnavailable.class, StopReason.WRITE_RESULT_UNKNOWN);
        assertThat(invoked).hasValue(0);
        assertThat(zk.provider().deliveries()).isZero();
        assertThat(attempt.decision()).isInstanceOf(Decision.StopUnavailable.class);

        // and the write did happen: the scope is armed, with A's token, and no outcome
        KeyHistory history = b.gate().inspect(zk.key().key());
        assertThat(history.state()).isEqualTo(ScopeState.ARMED);
        assertThat(history.scopes().get(0).armed()).isNotNull();
        assertThat(history.scopes().get(0).armed().by().task()).contains("task-a");
        assertThat(history.scopes().get(0).outcome()).isNull();

        // and the next contender stops unknown, for good
        try (Attempt next = b.gate().enter(zk.key(), Timing.scaled(1_000))) {
            assertThat(next.decision()).isInstanceOfSatisfying(Decision.StopUnknown.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.ARMED_WITHOUT_OUTCOME));
        }
        assertThat(zk.provider().deliveries()).isZero();
    }

    @Test
    void faultSwitchedOff_armingPassesNormally() throws Exception {
        // Given the same server with the fault not armed (control: the factory is otherwise transparent)
        try (Attempt attempt = a.gate().enter(zk.key())) {
            // When A crosses, Then it delivers and records normally
            assertThat(attempt.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(b.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
