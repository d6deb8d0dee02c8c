package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** SPEC §9 "no matching history": the first contender proceeds in scope 0 and delivers once. */
class NoMatchingHistoryTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void freshKey_proceedsInScopeZeroAndRecordsSentVerified() throws Exception {
        // Given a namespace where nobody ever entered this effect
        Worker worker = zk.newWorker("task-a");
        assertThat(worker.gate().inspect(zk.key().key()).exists()).isFalse();

        // When a contender enters, passes a checkpoint and crosses
        Crossing crossing;
        try (Attempt attempt = worker.gate().enter(zk.key())) {
            assertThat(attempt.decision()).isInstanceOf(Decision.Proceed.class);
            Decision.Proceed proceed = (Decision.Proceed) attempt.decision();
            assertThat(proceed.scope()).isZero();
            assertThat(attempt.checkpoint("picker-open").proceeds()).isTrue();
            crossing = attempt.cross(zk.provider().verified());
        }

        // Then exactly one delivery, and scope 0 holds a sent_verified outcome and an armed record
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(crossing).isInstanceOfSatisfying(Crossing.Crossed.class, c -> {
            assertThat(c.outcome()).isEqualTo(Outcome.SENT_VERIFIED);
            assertThat(c.recorded()).isTrue();
            assertThat(c.detail()).isEqualTo(zk.provider().ledger().get(0).receipt());
        });
        KeyHistory history = worker.gate().inspect(zk.key().key());
        assertThat(history.state()).isEqualTo("sent_verified");
        assertThat(history.scopes()).hasSize(1);
        KeyHistory.ScopeHistory scope0 = history.scopes().get(0);
        assertThat(scope0.outcome()).containsEntry("outcome", "sent_verified");
        assertThat(scope0.armed()).isNotNull();
        assertThat(scope0.armed().get("checkpoints")).asList().containsExactly("picker-open");
        assertThat(scope0.data()).containsEntry("armed", true);
        @SuppressWarnings("unchecked")
        Map<String, Object> by = (Map<String, Object>) scope0.outcome().get("by");
        assertThat(by).containsEntry("task", "task-a");
        assertThat(history.record()).containsEntry("sha256", zk.key().sha256()).containsEntry("provider", "slack");
        // the token the provider saw is the one the outcome records
        assertThat(((Number) scope0.outcome().get("token")).intValue())
                .isEqualTo(zk.provider().ledger().get(0).token().version());
        assertThat(Scenarios.exists(worker.client(), zk.keyPath() + "/0/outcome")).isTrue();
    }
}
