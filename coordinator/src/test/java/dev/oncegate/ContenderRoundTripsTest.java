package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * What a contender sends ZooKeeper while it decides, recorded at its gate's seam ({@link RecordingOps}) on a
 * real server: the key's creator, uncontended, sends nothing between the key's creation and its lease but
 * its election (it knows the scope it created: {@code DefaultAttempt.contend}); a contender whose create
 * meets a key another made meanwhile decides from that key; one whose key vanishes after every create gives
 * up instead of creating it forever.
 */
class ContenderRoundTripsTest extends OneKeyPerTest {

    /** A gate of task {@code task} on {@code seam}, closed after the test. */
    Gate gate(RecordingOps seam, String task) {
        Gate g = seam.gate(ns, task, Clock.systemUTC(), Duration.ofSeconds(30), new SimpleMeterRegistry());
        gates.add(g);
        return g;
    }

    static int indexOf(List<RecordingOps.Call> calls, Predicate<RecordingOps.Call> which) {
        return IntStream.range(0, calls.size()).filter(i -> which.test(calls.get(i))).findFirst()
                .orElseThrow(() -> new AssertionError("no such call in " + calls));
    }

    @Test
    void keysCreator_uncontended_sendsOnlyItsElectionBetweenCreatingTheKeyAndItsLease_andSetsNoWatch() throws Exception {
        // Given a key nobody has created, and a creator whose election answers while the creator waits for it: the
        // usual order, made certain (the seam hands the creator its leadership once the creator waits for an event)
        RecordingOps seam = new RecordingOps(client, "a");
        CountDownLatch creatorWaits = new CountDownLatch(1);
        AtomicBoolean answered = new AtomicBoolean();
        AtomicBoolean slowerThanTheGrace = new AtomicBoolean();
        seam.around((call, args, send) -> {
            if (call.method().equals("await")) {
                creatorWaits.countDown();
                Object r = send.send();
                slowerThanTheGrace.compareAndSet(false, !answered.get()); // its wait ended before the election answered
                return r;
            } else if (call.method().equals("joinElection")) {
                Runnable onChange = (Runnable) args[2];
                args[2] = (Runnable) () -> {
                    try {
                        creatorWaits.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    answered.set(true);
                    onChange.run();
                };
                ZooKeeperOps.ElectionMember member = (ZooKeeperOps.ElectionMember) send.send();
                return new ZooKeeperOps.ElectionMember() {
                    @Override
                    public String ourPath() {
                        return member.ourPath();
                    }

                    @Override
                    public boolean hasLeadership() {
                        return answered.get() && member.hasLeadership();
                    }

                    @Override
                    public void leave(boolean withEveryone) {
                        member.leave(withEveryone);
                    }
                };
            }
            return send.send();
        });

        // When it enters
        try (Attempt a = gate(seam, "a").enter(key)) {
            // Then it proceeds on the lease it wrote on the scope it created (version 0 → 1), having sent nothing but
            // its election between the key's creation and the lease CAS: no read of that scope, no second create of
            // its election container; and it set no watch anywhere
            assertThat(a.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> {
                assertThat(p.scope()).isZero();
                assertThat(p.token().version()).isEqualTo(1);
            });
            assumeFalse(slowerThanTheGrace.get(), "the election took longer than the creator's grace on this machine");
            List<RecordingOps.Call> calls = seam.calls();
            int created = indexOf(calls, c -> c.isMultiWith("Create", keyPath));
            int leased = indexOf(calls, c -> c.isMultiWith("SetData", scope0));
            assertThat(calls.subList(created + 1, leased)).extracting(RecordingOps.Call::method).containsExactly("joinElection");
            assertThat(calls).noneMatch(RecordingOps.Call::watched);
            assertThat(creatorWaits.getCount()).as("it waited for its election").isZero();
            assertThat(Records.decodeScope(scope0, client.getData().forPath(scope0)).lease().holder().task()).isEqualTo("a");
        }
    }

    @Test
    void keyCreatedByAnotherBetweenTheReadAndTheCreate_theContenderDecidesFromThatKey_stopsBusy_andJoinsNoElection()
            throws Exception {
        // Given B creates the key and takes scope 0's lease after A read that there is no key, before A's create
        RecordingOps seam = new RecordingOps(client, "a");
        AtomicBoolean raced = new AtomicBoolean();
        seam.around((call, args, send) -> {
            if (call.isMultiWith("Create", keyPath) && raced.compareAndSet(false, true)) {
                Attempt b = gate(new RecordingOps(client, "b"), "b").enter(key);
                attempts.add(b);
                assertThat(b.decision()).isInstanceOf(Decision.Proceed.class);
            }
            return send.send();
        });

        // When A, not waiting, goes on
        try (Attempt a = gate(seam, "a").enter(key)) {
            // Then its create meets B's key, and A reads it and stops busy on B's lease, without joining the election
            // (a contender outside the election joins only when it may have to act)
            assertThat(raced).isTrue();
            assertThat(a.decision()).isInstanceOfSatisfying(Decision.StopBusy.class, s -> {
                assertThat(s.reason()).isEqualTo(StopReason.EXECUTOR_ACTIVE);
                assertThat(s.evidence().task()).isEqualTo("b");
                assertThat(s.evidence().scope()).isZero();
            });
            assertThat(seam.calls()).noneMatch(c -> c.method().equals("joinElection"));
        }
        assertThat(Records.decodeScope(scope0, client.getData().forPath(scope0)).lease().holder().task()).isEqualTo("b");
    }

    @Test
    void keyThatVanishesAfterEveryCreate_theContenderGivesUpUnavailable_afterAFewTries() throws Exception {
        // Given something (an admin's clean-up gone wrong) that creates the key right before each of A's creates and
        // deletes it right after: A's create always meets a key, and A's read after it never finds one
        RecordingOps seam = new RecordingOps(client, "a");
        seam.around((call, args, send) -> {
            if (!call.isMultiWith("Create", keyPath)) {
                return send.send();
            }
            if (client.checkExists().forPath(keyPath) == null) {
                client.create().creatingParentsIfNeeded().forPath(keyPath);
            }
            try {
                return send.send();
            } finally {
                client.delete().deletingChildrenIfNeeded().forPath(keyPath);
            }
        });
        Gate a = gate(seam, "a");

        // When A enters (on a thread of its own: a contender that never gave up would never return)
        CompletableFuture<Attempt> entered = enterAsync(a, Duration.ZERO);

        // Then it gives up, unavailable on an unreadable key, after a few creates
        try (Attempt attempt = entered.get(20, TimeUnit.SECONDS)) {
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
                assertThat(s.reason()).isEqualTo(StopReason.UNREADABLE_RECORD);
                assertThat(s.evidence().path()).isEqualTo(keyPath);
                assertThat(s.evidence().detail()).contains("keeps disappearing");
            });
        }
        assertThat(seam.calls().stream().filter(c -> c.isMultiWith("Create", keyPath)).count()).isBetween(2L, 12L);
        assertThat(client.checkExists().forPath(keyPath)).isNull();
    }
}
