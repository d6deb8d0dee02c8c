package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.ScopeState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An interrupt that arrives while the lease write is in flight (a SIGTERM to {@code oncegate run}
 * during a rolling restart) must not leave that lease behind: ZooKeeper sent the write before the
 * wait for its reply was cut, and the server applies it. Left there, it made every contender that
 * does not wait (run's default {@code --wait 0}) stop busy, "another executor is active", for a
 * whole lease TTL, though nobody was executing. The contender now learns whether its write landed
 * and releases it before the InterruptedException leaves {@code enter}.
 *
 * <p>A held request holds up its connection's pings too: on a loaded machine, a hold that outlived
 * a short session's read timeout ended the connection, Curator retried the write on a new one, and
 * the interrupt came after it had proceeded. The workers here have {@link Timing#LONG_SESSION}, and
 * each test checks that the connection stayed up.
 *
 * <p>A contender thread descheduled between sending the write and waiting for its reply may see the
 * reply before the interrupt throws (ZooKeeper's client waits only while no reply has come): it ends
 * the same way, with the interrupt and the lease released (the coordinator's
 * {@code InterruptAfterTheLeaseReplyTest} makes that moment certain); before, it proceeded.
 */
class LeaseWriteInterruptedTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standaloneWithAmbiguousWrites();

    @Test
    void interruptWhileTheLeaseWriteIsInFlight_theLeaseThatLandedIsReleased_andTheNextContenderProceedsAtOnce()
            throws Exception {
        Worker a = zk.newWorker("task-a", Timing.LONG_SESSION, b -> { });
        AtomicReference<Thread> contender = new AtomicReference<>();
        AtomicBoolean flagKept = new AtomicBoolean();
        // Given the server holds the first contender's lease write on scope 0 before applying it
        AmbiguousWriteCnxnFactory.Hold hold = AmbiguousWriteCnxnFactory.holdNextSetData(zk.keyPath() + "/0");
        Future<Object> entering = zk.newPool(1).submit(() -> {
            contender.set(Thread.currentThread());
            try (Attempt attempt = a.gate().enter(zk.key())) {
                return attempt.decision();
            } catch (InterruptedException e) {
                flagKept.set(Thread.currentThread().isInterrupted());
                Thread.interrupted();
                return e;
            }
        });
        assertThat(hold.awaitHeld(Timing.EVENTUALLY)).as("the lease write reached the server").isTrue();

        // When the contender's thread is interrupted while it waits for the reply, and then the server applies the write
        contender.get().interrupt();
        hold.release();

        // Then entering ends with the interrupt, deciding nothing
        Object entered = entering.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(a.connectionInterrupted()).as("premise: the connection outlived the hold (else the write was retried on a new one)").isFalse();
        assertThat(entered).isInstanceOf(InterruptedException.class);
        assertThat(flagKept).as("the interrupt is kept for the caller").isTrue();
        // and the lease that landed (version 1) was released (version 2)
        assertThat(a.client().checkExists().forPath(zk.keyPath() + "/0").getVersion()).as("scope 0's version").isEqualTo(2);
        assertScope0OpenAndANoWaitContenderDeliversInIt(a);
    }

    @Test
    void interruptWhileACheckpointsRenewalIsInFlight_closingTheAttemptReleasesTheRenewedLease() throws Exception {
        // Given an executor that proceeds, then passes a checkpoint whose lease renewal the server holds
        Worker a = zk.newWorker("task-a", Timing.LONG_SESSION, b -> { });
        HeldRenewal held = HeldRenewal.start(a);

        // When the executor is interrupted while it waits for the renewal's reply, and then the server applies it
        held.executor().interrupt();
        held.hold().release();

        // Then the checkpoint ends with the interrupt, and the renewed lease was released when the attempt closed
        Object checkpointed = held.checkpointing().get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(a.connectionInterrupted()).as("premise: the connection outlived the hold (else the renewal was retried on a new one)").isFalse();
        assertThat(checkpointed).isInstanceOf(InterruptedException.class);
        assertScope0OpenAndANoWaitContenderDeliversInIt(a);
    }

    @Test
    void interruptedTwice_whileARenewalIsInFlightAndThenWhileAskingWhetherItLanded_closingStillReleasesTheLease()
            throws Exception {
        // Given an executor that proceeds, then passes a checkpoint whose lease renewal the server holds
        Worker a = zk.newWorker("task-a", Timing.LONG_SESSION, b -> { });
        HeldRenewal held = HeldRenewal.start(a);

        // When the executor is interrupted while it waits for the renewal's reply, and again while it waits for
        // the read that asks whether the renewal landed (queued behind it), and then the server applies the renewal
        held.executor().interrupt();
        Scenarios.eventually("the executor asks whether its renewal landed", () -> java.util.Arrays.stream(
                held.executor().getStackTrace()).anyMatch(f -> f.getMethodName().equals("recogniseLease")));
        held.executor().interrupt();
        held.hold().release();

        // Then the checkpoint ends with the interrupt, and closing the attempt learnt the renewed token and released it
        Object checkpointed = held.checkpointing().get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(a.connectionInterrupted()).as("premise: the connection outlived the hold").isFalse();
        assertThat(checkpointed).isInstanceOf(InterruptedException.class);
        assertThat(a.client().checkExists().forPath(zk.keyPath() + "/0").getVersion())
                .as("scope 0's version: leased, renewed, released").isEqualTo(3);
        assertScope0OpenAndANoWaitContenderDeliversInIt(a);
    }

    /**
     * An executor of {@code a} that proceeds, then passes a checkpoint whose lease renewal the server
     * holds (started once the renewal is held); its checkpoint's result, or the InterruptedException it
     * ended with, is {@code checkpointing}'s, and the attempt is closed (by the worker's thread) after it.
     */
    private record HeldRenewal(Future<Object> checkpointing, Thread executor, AmbiguousWriteCnxnFactory.Hold hold) {

        static HeldRenewal start(Worker a) throws Exception {
            AtomicReference<Thread> executor = new AtomicReference<>();
            java.util.concurrent.CountDownLatch proceeding = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch holdSet = new java.util.concurrent.CountDownLatch(1);
            Future<Object> checkpointing = zk.newPool(1).submit(() -> {
                executor.set(Thread.currentThread());
                try (Attempt attempt = a.gate().enter(zk.key())) {
                    assertThat(attempt.decision().proceeds()).isTrue();
                    proceeding.countDown();
                    holdSet.await();
                    try {
                        return attempt.checkpoint("picked");
                    } catch (InterruptedException e) {
                        Thread.interrupted(); // a second interrupt may be pending: closing must release all the same
                        return e; // the worker gives up; closing the attempt (here) must release its lease
                    }
                } finally {
                    Thread.interrupted();
                }
            });
            assertThat(proceeding.await(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            AmbiguousWriteCnxnFactory.Hold hold = AmbiguousWriteCnxnFactory.holdNextSetData(zk.keyPath() + "/0");
            holdSet.countDown();
            assertThat(hold.awaitHeld(Timing.EVENTUALLY)).as("the renewal reached the server").isTrue();
            return new HeldRenewal(checkpointing, executor.get(), hold);
        }
    }

    /** Scope 0 is open with no lease, so a contender that does not wait proceeds at once in it, and delivers once. */
    private static void assertScope0OpenAndANoWaitContenderDeliversInIt(Worker a) throws Exception {
        KeyHistory history = a.gate().inspect(zk.key().key());
        assertThat(history.scopes()).singleElement().satisfies(s -> {
            assertThat(s.state()).isEqualTo(ScopeState.OPEN);
            assertThat(s.lease()).isNull();
        });
        try (Attempt b = zk.newGate("task-b").enter(zk.key())) {
            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
            b.cross(zk.provider().verified());
        }
        assertThat(zk.provider().ledger()).singleElement().satisfies(d -> assertThat(d.taskId()).isEqualTo("task-b"));
    }
}
