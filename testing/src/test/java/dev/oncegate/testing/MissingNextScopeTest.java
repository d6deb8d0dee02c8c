package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A contender never spins on a history it cannot follow (issue 15, item 7): a scope that proved
 * {@code not_sent} but whose next scope is gone (a partial clean-up, a partial restore) stops it
 * with {@code unreadable_record} naming the missing scope, and an interrupt ends any wait at once.
 */
class MissingNextScopeTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void notSentScopeWhoseNextScopeIsMissing_stopsUnreadableNamingIt_insteadOfSpinning() throws Exception {
        // Given scope 0 proved not_sent (which opened scope 1), and scope 1 was then removed by hand
        try (Attempt a = zk.newGate("task-a").enter(zk.key())) {
            a.cross(zk.provider().rejects("rejected before anything was stored"));
        }
        zk.newClient().delete().deletingChildrenIfNeeded().forPath(zk.keyPath() + "/1");

        // When a contender enters without waiting (on a thread of its own: before the fix it never returned)
        ExecutorService pool = zk.newPool(1);
        Future<Attempt> entering = Scenarios.enterAsync(pool, zk.newGate("task-b"), zk.key(), Duration.ZERO);
        Attempt b = zk.track(entering.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS));

        // Then it stops, naming the scope that is missing, and nothing is delivered
        assertThat(b.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
            assertThat(s.reason()).isEqualTo(StopReason.UNREADABLE_RECORD);
            assertThat(s.evidence().path()).isEqualTo(zk.keyPath() + "/1");
            assertThat(s.evidence().detail()).contains("scope 1 is missing");
        });
        assertThat(zk.provider().deliveries()).isZero();
    }

    @Test
    void contenderWaitingOnAnArmedScope_returnsAtOnceWhenInterrupted() throws Exception {
        // Given A armed scope 0 and is inside its action, and B waits for it for an hour
        try (CrossingInFlight a = CrossingInFlight.start(zk.newGate("task-a"), zk.key(), zk.provider().verified())) {
            assertThat(a.awaitInAction(Timing.EVENTUALLY)).isTrue();
            ExecutorService pool = zk.newPool(1);
            Future<Attempt> waiting = Scenarios.enterAsync(pool, zk.newGate("task-b"), zk.key(), Duration.ofHours(1));
            Scenarios.eventually("B waits on the scope", () -> Scenarios.watched(zk, zk.keyPath() + "/0"));

            // When B's thread is interrupted
            pool.shutdownNow();

            // Then its enter ends with InterruptedException, promptly
            assertThatThrownBy(() -> waiting.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InterruptedException.class);
            a.releaseAndAwait(Timing.EVENTUALLY);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }
}
