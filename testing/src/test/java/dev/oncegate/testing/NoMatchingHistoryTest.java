package dev.oncegate.testing;

import dev.oncegate.ScopeState;
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
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(history.scopes()).hasSize(1);
        KeyHistory.Scope scope0 = history.scopes().get(0);
        assertThat(scope0.outcome().outcome()).isEqualTo(Outcome.SENT_VERIFIED);
        assertThat(scope0.armed()).isNotNull();
        assertThat(scope0.armed().checkpoints()).containsExactly("picker-open");
        assertThat(scope0.outcome().by().task()).isEqualTo("task-a");
        assertThat(history.record().sha256()).isEqualTo(zk.key().sha256());
        assertThat(history.record().provider()).isEqualTo("slack");
        // the token the provider saw is the one the outcome records
        assertThat(scope0.outcome().token().version())
                .isEqualTo(zk.provider().ledger().get(0).token().version());
        assertThat(Scenarios.exists(worker.client(), zk.keyPath() + "/0/armed/outcome")).isTrue();
    }
}
