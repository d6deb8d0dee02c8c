package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §4 "Liveness": a hung (still connected) executor is fenced when its lease lapses and
 * the next contender proceeds. These scenarios check that the key does not stay blocked
 * behind a fenced executor that still leads the scope's election.
 */
class ElectionLivenessTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void hungLeaderFencedThenTakerLeavesWithoutCrossing_nextContenderProceeds() throws Exception {
        // Given A (2 s lease) proceeded and hangs, still connected and still leading the election;
        // B took the lapsed lease over, then left without crossing (its lease released: scope open)
        Worker a = zk.newWorker("task-a", b -> b.leaseTtl(Timing.SHORT_LEASE));
        Attempt hung = zk.track(a.gate().enter(zk.key()));
        assertThat(hung.decision().proceeds()).isTrue();
        Worker b = zk.newWorker("task-b", builder -> builder.leaseTtl(Timing.SHORT_LEASE));
        Future<Attempt> taker = Scenarios.enterAsync(zk.newPool(1), b.gate(), zk.key(), Timing.WAIT);
        try (Attempt attemptB = taker.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(attemptB.decision().proceeds()).isTrue();
        }
        assertThat(b.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.OPEN);

        // When C enters and is willing to wait several lease TTLs
        Worker c = zk.newWorker("task-c", builder -> builder.leaseTtl(Timing.SHORT_LEASE));
        try (Attempt attemptC = c.gate().enter(zk.key(), Timing.SHORT_LEASE.multipliedBy(4))) {
            // Then C proceeds and delivers (nobody holds the lease; the hung A can never arm)
            assertThat(attemptC.decision()).isInstanceOf(Decision.Proceed.class);
            assertThat(attemptC.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(c.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
