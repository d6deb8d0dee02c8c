package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.FencingToken;
import dev.oncegate.KeyHistory;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §4.6 and §9 "a hung executor fenced after its lease lapses": A proceeds with a short
 * lease and stalls while still connected; B takes the lapsed lease over and delivers; A can
 * neither pass a checkpoint nor arm afterwards.
 */
class HungExecutorFencingTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    Worker a;
    Worker b;
    Attempt attemptA;
    FencingToken tokenA;

    /** A proceeds with a 2 s lease and hangs; B, waiting longer than that, takes the lease over. */
    private Attempt hungAThenBTakesOver() throws Exception {
        a = zk.newWorker("task-a", builder -> builder.leaseTtl(Timing.SHORT_LEASE));
        b = zk.newWorker("task-b");
        attemptA = zk.track(a.gate().enter(zk.key()));
        assertThat(attemptA.decision()).isInstanceOf(Decision.Proceed.class);
        tokenA = ((Decision.Proceed) attemptA.decision()).token();
        Future<Attempt> enteredB = Scenarios.enterAsync(zk.newPool(1), b.gate(), zk.key(), Timing.WAIT);
        Attempt attemptB = zk.track(enteredB.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertThat(attemptB.decision()).isInstanceOf(Decision.Proceed.class);
        return attemptB;
    }

    private BoundaryAction counting(AtomicInteger invoked) {
        return ctx -> {
            invoked.incrementAndGet();
            return zk.provider().verified().deliver(ctx);
        };
    }

    @Test
    void leaseLapsed_takeoverFencesHungExecutorsCrossing() throws Exception {
        // Given A hung past its lease and B took it over (B has not crossed yet)
        Attempt attemptB = hungAThenBTakesOver();
        FencingToken tokenB = ((Decision.Proceed) attemptB.decision()).token();

        // When A wakes up and tries to cross
        AtomicInteger invokedA = new AtomicInteger();
        Crossing crossingA = attemptA.cross(counting(invokedA));

        // Then A is refused as fenced, its action never ran
        Scenarios.assertRefused(crossingA, Decision.StopBusy.class, StopReason.FENCED);
        assertThat(invokedA).hasValue(0);
        // and a later checkpoint of A repeats the stop
        assertThat(attemptA.checkpoint("after-wake")).isEqualTo(attemptA.decision()).isNotInstanceOf(Decision.Proceed.class);

        // while B crosses normally: exactly one delivery, with B's token, larger than A's
        assertThat(attemptB.checkpoint("b-picker").proceeds()).isTrue();
        assertThat(attemptB.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        FencingToken delivered = zk.provider().ledger().get(0).token();
        assertThat(zk.provider().ledger().get(0).taskId()).isEqualTo("task-b");
        assertThat(delivered.version()).isGreaterThan(tokenB.version() - 1).isGreaterThan(tokenA.version());
        assertThat(delivered.zxid()).isGreaterThan(tokenA.zxid());
        assertThat(tokenB.zxid()).isGreaterThan(tokenA.zxid());
        KeyHistory history = b.gate().inspect(zk.key().key());
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(history.scopes().get(0).armed().by().task()).contains("task-b");
    }

    @Test
    void leaseLapsed_hungExecutorsCheckpointAfterTakeoverIsRefusedAndItCannotCross() throws Exception {
        // Given A hung past its lease, B took over and delivered
        Attempt attemptB = hungAThenBTakesOver();
        assertThat(attemptB.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);

        // When A wakes up and passes a checkpoint
        Decision checkpoint = attemptA.checkpoint("picker-open");

        // Then the checkpoint stops A (the scope is consumed by B's delivery)
        assertThat(checkpoint).isNotInstanceOf(Decision.Proceed.class);
        assertThat(checkpoint).isInstanceOfSatisfying(Decision.StopSent.class,
                s -> assertThat(s.evidence().task()).isEqualTo("task-b"));
        // and A can no longer cross at all: its action is never invoked
        AtomicInteger invokedA = new AtomicInteger();
        assertThatThrownBy(() -> attemptA.cross(counting(invokedA))).isInstanceOf(IllegalStateException.class);
        assertThat(invokedA).hasValue(0);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(zk.provider().ledger().get(0).token().zxid()).isGreaterThan(tokenA.zxid());
        assertThat(b.gate().inspect(zk.key().key()).scopes()).hasSize(1);
    }

    @Test
    void leaseLapsed_checkpointBeforeTakeoverRenewsAndKeepsTheLease() throws Exception {
        // Given A (2 s lease) passes checkpoints more often than its TTL, and B waits only 3 TTLs
        a = zk.newWorker("task-a", builder -> builder.leaseTtl(Timing.SHORT_LEASE));
        b = zk.newWorker("task-b");
        attemptA = zk.track(a.gate().enter(zk.key()));
        assertThat(attemptA.decision().proceeds()).isTrue();
        Future<Attempt> enteredB = Scenarios.enterAsync(zk.newPool(1), b.gate(), zk.key(), Timing.SHORT_LEASE.multipliedBy(3));
        // When A keeps renewing while B waits (poll until B gives up; never sleep-and-hope)
        int renewals = 0;
        while (!enteredB.isDone()) {
            assertThat(attemptA.checkpoint("renew-" + renewals++).proceeds()).isTrue();
            Thread.sleep(Timing.SHORT_LEASE.toMillis() / 4);
        }
        // Then B never took over: it stopped busy, and A crosses and delivers once
        Attempt attemptB = zk.track(enteredB.get());
        assertThat(attemptB.decision()).isInstanceOfSatisfying(Decision.StopBusy.class,
                s -> assertThat(s.reason()).isEqualTo(StopReason.WAIT_EXPIRED));
        assertThat(attemptA.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(zk.provider().ledger().get(0).taskId()).isEqualTo("task-a");
        assertThat(b.gate().inspect(zk.key().key()).scopes().get(0).armed().checkpoints()).hasSize(renewals);
    }

    @Test
    void leaseLapsed_takerProvedNotSent_hungExecutorIsToldFencedNotUnknown() throws Exception {
        // Given A hung past its lease, B took over and its provider proved not_sent (scope 1 opened)
        Attempt attemptB = hungAThenBTakesOver();
        assertThat(attemptB.cross(zk.provider().rejects("HTTP 400 before upload"))).isInstanceOf(Crossing.Crossed.class);
        KeyHistory history = b.gate().inspect(zk.key().key());
        assertThat(Scenarios.outcomeOf(history, 0)).isEqualTo("not_sent");
        assertThat(history.state()).isEqualTo(ScopeState.OPEN);

        // When A wakes up and passes a checkpoint
        Decision checkpoint = attemptA.checkpoint("after-wake");

        // Then A is fenced, and not told the key is consumed with an unknown status (it is not)
        assertThat(checkpoint).isNotInstanceOf(Decision.Proceed.class);
        assertThat(checkpoint).isInstanceOfSatisfying(Decision.StopBusy.class,
                s -> assertThat(s.reason()).isEqualTo(StopReason.FENCED));
        assertThat(zk.provider().deliveries()).isZero();
    }
}
