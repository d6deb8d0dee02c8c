package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;

/**
 * SPEC §9 "an overnight resume after a sibling may have sent": a task resumed in a new process
 * (a brand-new client, session and gate, same task id) must not trust its own empty local state.
 */
class OvernightResumeTest extends ServerScenario {

    static final String TASK = "report-42";

    @Test
    void siblingSentBeforeResume_resumedTaskStopsSent() throws Exception {
        // Given a sibling of the task delivered yesterday, and its process is gone
        try (Worker sibling = Worker.start(zk.connectString(), ns, TASK + "/sibling", Timing.SESSION)) {
            try (Attempt a = sibling.gate().enter(key)) {
                a.cross(provider.verified());
            }
        }
        // When the task resumes in a new process with the same task id
        Worker resumed = worker(TASK);
        try (Attempt attempt = resumed.gate().enter(key, Timing.scaled(2_000))) {
            // Then it stops: the effect was sent
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopSent.class,
                    s -> assertThat(s.evidence().task()).isEqualTo(TASK + "/sibling"));
        }
        assertThat(provider.deliveries()).isEqualTo(1);
        assertThat(resumed.gate().inspect(key.key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }

    @Test
    void siblingMayHaveSent_resumedTaskStopsUnknown() throws Exception {
        // Given a sibling delivered but could not confirm it, and its process is gone
        try (Worker sibling = Worker.start(zk.connectString(), ns, TASK, Timing.SESSION)) {
            try (Attempt a = sibling.gate().enter(key)) {
                a.cross(provider.unconfirmed());
            }
        }
        // When the task resumes in a new process with the same task id
        Worker resumed = worker(TASK);
        try (Attempt attempt = resumed.gate().enter(key)) {
            // Then it stops unknown: an uncertain outcome consumed the key
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnknown.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.SEND_STATUS_UNKNOWN));
        }
        assertThat(provider.deliveries()).isEqualTo(1);
        assertThat(resumed.gate().inspect(key.key()).state()).isEqualTo(ScopeState.SEND_STATUS_UNKNOWN);
    }

    @Test
    void siblingDiedInsideTheAction_resumedTaskStopsUnknown() throws Exception {
        // Given a sibling armed the scope and its process died inside the action (no outcome)
        Worker sibling = worker(TASK);
        Attempt a = sibling.gate().enter(key);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        Future<Crossing> stuck = pool(1).submit(() -> a.cross(provider.blocking(entered, never)));
        assertThat(entered.await(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        sibling.crash();

        // When the task resumes in a new process, even willing to wait
        Worker resumed = worker(TASK);
        try (Attempt attempt = resumed.gate().enter(key, Timing.scaled(1_000))) {
            // Then it stops unknown: an armed scope without outcome is consumed
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnknown.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.ARMED_WITHOUT_OUTCOME));
        }
        assertThat(provider.deliveries()).isZero();
        KeyHistory history = resumed.gate().inspect(key.key());
        assertThat(history.state()).isEqualTo(ScopeState.ARMED);
        assertThat(history.scopes().get(0).armed()).isNotNull();
        stuck.cancel(true);
    }

    @Test
    void ownProcessDiedBeforeArming_resumedTaskTakesOverAndDeliversOnce() throws Exception {
        // Given yesterday's process of this task proceeded, then died before arming
        Worker yesterday = worker(TASK);
        Attempt old = yesterday.gate().enter(key);
        assertThat(old.decision().proceeds()).isTrue();
        yesterday.crash();

        // When the task resumes in a new process (its old lease has not lapsed: 30 s TTL)
        Worker resumed = worker(TASK);
        long started = System.nanoTime();
        Crossing crossing;
        try (Attempt attempt = resumed.gate().enter(key, Timing.WAIT)) {
            // Then it takes the abandoned lease over (the old session's latch node is gone)
            assertThat(attempt.decision().proceeds()).isTrue();
            crossing = attempt.cross(provider.verified());
        }
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(25));
        assertThat(crossing).isInstanceOf(Crossing.Crossed.class);
        assertThat(provider.deliveries()).isEqualTo(1);
        assertThat(resumed.gate().inspect(key.key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
