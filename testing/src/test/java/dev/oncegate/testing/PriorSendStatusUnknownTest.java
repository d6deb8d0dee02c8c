package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import dev.oncegate.StopReason;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/** SPEC §9 "a prior send_status_unknown": an uncertain outcome consumes the key forever. */
class PriorSendStatusUnknownTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"unconfirmed", "deliversThenFails"})
    void priorUnknown_everyLaterContenderStopsUnknown(String how) throws Exception {
        // Given an executor that delivered but could not confirm it
        BoundaryAction action = how.equals("unconfirmed") ? zk.provider().unconfirmed()
                : zk.provider().deliversThenFails(new IllegalStateException("socket timeout after upload"));
        Worker first = zk.newWorker("task-a");
        try (Attempt a = first.gate().enter(zk.key())) {
            Crossing c = a.cross(action);
            assertThat(c).isInstanceOfSatisfying(Crossing.Crossed.class, x -> {
                assertThat(x.outcome()).isEqualTo(Outcome.SEND_STATUS_UNKNOWN);
                assertThat(x.recorded()).isTrue();
            });
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);

        // When contenders keep coming, with and without waiting
        for (int i = 0; i < 5; i++) {
            try (Attempt attempt = zk.newWorker("task-" + i).gate().enter(zk.key(), i == 0 ? Timing.scaled(2_000) : Duration.ZERO)) {
                // Then each stops unknown, never proceeds
                assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnknown.class, s -> {
                    assertThat(s.reason()).isEqualTo(StopReason.SEND_STATUS_UNKNOWN);
                    assertThat(s.evidence().path()).isEqualTo(zk.keyPath() + "/0/armed/outcome");
                });
            }
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        KeyHistory history = first.gate().inspect(zk.key().key());
        assertThat(history.state()).isEqualTo(ScopeState.SEND_STATUS_UNKNOWN);
        assertThat(history.scopes()).hasSize(1);
        assertThat(Scenarios.outcomeOf(history, 0)).isEqualTo("send_status_unknown");
    }
}
