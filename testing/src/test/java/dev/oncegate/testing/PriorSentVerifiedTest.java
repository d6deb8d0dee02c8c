package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** SPEC §9 "a prior sent_verified": the key is consumed for good. */
class PriorSentVerifiedTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void priorSentVerified_everyLaterContenderStopsSent() throws Exception {
        // Given an effect delivered and verified by task-a
        Worker first = zk.newWorker("task-a");
        try (Attempt a = first.gate().enter(zk.key())) {
            a.cross(zk.provider().verified());
        }
        KeyHistory before = first.gate().inspect(zk.key().key());

        // When ten later contenders (other tasks, other sessions, even the same gate) enter
        for (int i = 0; i < 10; i++) {
            Worker w = i % 2 == 0 ? zk.newWorker("task-" + i) : first;
            try (Attempt attempt = w.gate().enter(zk.key(), i == 9 ? Timing.scaled(2_000) : java.time.Duration.ZERO)) {
                // Then each stops with stop_sent, resting on the outcome record of scope 0
                assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopSent.class, s -> {
                    assertThat(s.reason()).isEqualTo(StopReason.SENT_VERIFIED);
                    assertThat(s.evidence().path()).isEqualTo(zk.keyPath() + "/0/outcome");
                    assertThat(s.evidence().task()).isEqualTo("task-a");
                    assertThat(s.evidence().scope()).isZero();
                });
            }
        }

        // and still exactly one delivery, and the records did not change
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        KeyHistory after = first.gate().inspect(zk.key().key());
        assertThat(after.scopes()).hasSize(1);
        assertThat(after.scopes().get(0).version()).isEqualTo(before.scopes().get(0).version());
        assertThat(after.scopes().get(0).mzxid()).isEqualTo(before.scopes().get(0).mzxid());
        assertThat(after.scopes().get(0).outcome()).isEqualTo(before.scopes().get(0).outcome());
    }
}
