package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * An interrupt that reaches the contender's thread after ZooKeeper answered its lease write, but
 * before the thread looked at the answer, is an interrupt before the decision all the same.
 *
 * <p>ZooKeeper's client waits for a reply only while the reply has not come
 * ({@code ClientCnxn.submitRequest}: {@code while (!packet.finished) packet.wait()}): a thread that
 * is descheduled between sending the request and that check, while the reply arrives, returns the
 * reply with the interrupt flag set and throws nothing. A loaded CI machine did exactly that to
 * {@code LeaseWriteInterruptedTest} (its interrupt came while the server held the write; the thread
 * proceeded with the flag set). The seam here delivers the interrupt at that moment on purpose: the
 * lease write is sent and answered, and the thread's flag is set before the gate sees the answer.
 * Entering must end with the interrupt and release the lease; a checkpoint must end with the
 * interrupt, and closing the attempt releases the renewed lease.
 */
class InterruptAfterTheLeaseReplyTest extends OneKeyPerTest {

    /** A gate of task {@code task} on {@code seam}, closed after the test. */
    private Gate gate(RecordingOps seam, String task) {
        Gate g = seam.gate(ns, task, Clock.systemUTC(), Duration.ofSeconds(30), new SimpleMeterRegistry());
        gates.add(g);
        return g;
    }

    /** From now on, the {@code nth} lease write on scope 0 (1 = the first) is answered, and then the thread is interrupted. */
    private void interruptAfterTheReplyTo(RecordingOps seam, int nth) {
        AtomicInteger leaseWrites = new AtomicInteger();
        seam.around((call, args, send) -> {
            Object reply = send.send();
            if (call.isMultiWith("SetData", scope0) && leaseWrites.incrementAndGet() == nth) {
                Thread.currentThread().interrupt();
            }
            return reply;
        });
    }

    @Test
    void interruptAfterTheLeaseWritesReply_enterEndsWithTheInterrupt_releasesTheLease_andTheNextContenderProceedsAtOnce()
            throws Exception {
        // Given a contender whose thread is interrupted once ZooKeeper has answered its lease write on scope 0
        RecordingOps seam = new RecordingOps(client, "a");
        interruptAfterTheReplyTo(seam, 1);
        Gate a = gate(seam, "a");

        // When it enters
        // Then entering ends with the interrupt, and the flag is kept for the caller
        assertThatThrownBy(() -> a.enter(key)).isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted()).as("the interrupt is kept for the caller").isTrue();
        // and the lease that landed (version 1) was released (version 2)
        assertThat(client.checkExists().forPath(scope0).getVersion()).as("scope 0's version: leased, released").isEqualTo(2);
        assertScope0OpenAndANoWaitContenderProceedsInIt();
    }

    @Test
    void interruptAfterTheRenewalsReply_checkpointEndsWithTheInterrupt_andClosingReleasesTheRenewedLease() throws Exception {
        // Given an executor of scope 0 whose thread is interrupted once ZooKeeper has answered its checkpoint's renewal
        RecordingOps seam = new RecordingOps(client, "a");
        interruptAfterTheReplyTo(seam, 2);
        try (Attempt a = gate(seam, "a").enter(key)) {
            assertThat(a.decision().proceeds()).isTrue();

            // When it passes a checkpoint
            // Then the checkpoint ends with the interrupt, the flag kept for the caller
            assertThatThrownBy(() -> a.checkpoint("picked")).isInstanceOf(InterruptedException.class);
            assertThat(Thread.interrupted()).as("the interrupt is kept for the caller").isTrue();
        }
        // and closing the attempt released the renewed lease: leased, renewed, released
        assertThat(client.checkExists().forPath(scope0).getVersion()).as("scope 0's version").isEqualTo(3);
        assertScope0OpenAndANoWaitContenderProceedsInIt();
    }

    /** Scope 0 is open with no lease, so a contender that does not wait proceeds at once in it. */
    private void assertScope0OpenAndANoWaitContenderProceedsInIt() throws Exception {
        assertThat(Records.decodeScope(scope0, client.getData().forPath(scope0)).lease()).as("scope 0's lease").isNull();
        try (Attempt b = gate(new RecordingOps(client, "b"), "b").enter(key, Duration.ZERO)) {
            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
        }
    }
}
