package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.WatchersDebug;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;

/**
 * A contender that waits, against a real server: what it does when the world changes under it while
 * it waits (its own election node deleted, an authorization created, the holder leaving), and when its
 * rollback witness fails right after its lease. Each test bounds how long the waiter may take by far
 * less than its own deadline and the lease TTL, so a waiter that only decides at its deadline fails the
 * test; the bounds are generous (seconds for what takes milliseconds, or for one safety re-read where
 * nothing the waiter watches changes), so a loaded machine does not make them flaky.
 */
class WaitingContenderTest extends OneKeyPerTest {

    /**
     * How long a waiter may take to act on a change: far below every waiter's deadline below (60 s or more),
     * above the default TTL's safety re-read interval (TTL/4: 7.5 s), which is what wakes a waiter to an
     * authorization (nothing it watches changes).
     */
    static final Duration PROMPTLY = Duration.ofSeconds(20);

    final AtomicInteger deliveries = new AtomicInteger();

    static org.apache.curator.framework.CuratorFramework observer;

    static synchronized org.apache.curator.framework.CuratorFramework observer() {
        if (observer == null) {
            observer = org.apache.curator.framework.CuratorFrameworkFactory.newClient(zk.server().getConnectString(), 6000,
                    3000, new org.apache.curator.retry.RetryOneTime(100));
            observer.start();
        }
        return observer;
    }

    @org.junit.jupiter.api.AfterAll
    static synchronized void closeObserver() {
        if (observer != null) {
            observer.close();
            observer = null;
        }
    }

    Gate gate(String task) {
        return gate(Gate.builder(client).namespace(ns).taskId(task));
    }

    Gate gate(Gate.Builder builder) {
        Gate g = builder.build();
        gates.add(g);
        return g;
    }

    /** Still waiting after a while (it has read the scope and found a reason to wait). */
    static void awaitStillWaiting(CompletableFuture<Attempt> waiting) {
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(10)).until(() -> !waiting.isDone());
    }

    BoundaryAction delivers(String receipt) {
        return ctx -> {
            deliveries.incrementAndGet();
            return ActionResult.verified(receipt);
        };
    }

    /** What an action ends with, once released. */
    interface Ending {
        ActionResult end() throws Exception;
    }

    /** Crosses {@code a} on another thread with an action that delivers, holds until {@code release}, then ends so. */
    CompletableFuture<Crossing> crossWhenReleased(Attempt a, CountDownLatch release, Ending ending) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return a.cross(ctx -> {
                    deliveries.incrementAndGet();
                    release.await(60, TimeUnit.SECONDS);
                    return ending.end();
                });
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
    }

    List<String> electionNodes(String scopePath) throws Exception {
        return client.checkExists().forPath(Layout.latch(scopePath)) == null ? List.of()
                : client.getChildren().forPath(Layout.latch(scopePath));
    }

    Records.Scope scopeRecord(String scopePath) throws Exception {
        return Records.decodeScope(scopePath, client.getData().forPath(scopePath));
    }

    @Test
    void ownElectionNodeDeletedUnderALiveLatch_theLeaderJoinsAgainWithANewNode_andProceedsOnceTheScopeIsFree()
            throws Exception {
        // Given a key whose scope 0 is leased by hand to a live holder, whose election node sorts after every
        // member's (so that a member leads the election while the holder stays live)
        try (Attempt first = gate("creator").enter(key)) {
            assertThat(first.decision()).isInstanceOf(Decision.Proceed.class);
        }
        String latchPath = Layout.latch(scope0);
        String holderNode = latchPath + "/_c_holder-latch-9999999999";
        client.create().creatingParentsIfNeeded().forPath(holderNode);
        Records.Scope open = scopeRecord(scope0);
        client.setData().forPath(scope0, Records.scope(open.withLease(new KeyHistory.Lease(
                new Actor("x", "elsewhere", 1, "1", Records.newAttemptId()), holderNode,
                Instant.now().plus(Duration.ofMinutes(10)), null))));
        // and B, whose clock is 20 minutes ahead (the lease looks lapsed) while it has no election node of
        // its own: a contender outside the election only joins it to take a lease over, and a member that
        // leads waits behind a live holder; this clock makes B join, then lead and wait
        java.time.Clock lapsedWhileOutside = new java.time.Clock() {
            @Override
            public Instant instant() {
                return hasMemberNode(latchPath, holderNode) ? Instant.now() : Instant.now().plus(Duration.ofMinutes(20));
            }

            @Override
            public java.time.ZoneId getZone() {
                return java.time.ZoneOffset.UTC;
            }

            @Override
            public java.time.Clock withZone(java.time.ZoneId zone) {
                throw new UnsupportedOperationException();
            }
        };
        CompletableFuture<Attempt> waiting = enterAsync(gate(Gate.builder(client).namespace(ns).taskId("b")
                .clock(lapsedWhileOutside)), Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(10)).until(() -> hasMemberNode(latchPath, holderNode));
        awaitStillWaiting(waiting);
        assertThat(scopeRecord(scope0).lease().holder().task()).as("B waits behind the holder").isEqualTo("x");
        String bNode = latchPath + "/" + electionNodes(scope0).stream().filter(name -> !holderNode.endsWith(name))
                .findFirst().orElseThrow();

        // When an admin deletes B's election node (its latch, which leads and so watches no predecessor, does not
        // notice), and the holder leaves, its lease with it
        client.delete().forPath(bNode);
        client.delete().forPath(holderNode);
        client.setData().forPath(scope0, Records.scope(open));

        // Then B's lease CAS, refused on its gone node, makes it join again, and it proceeds with a new node
        Attempt b = waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
        assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
        KeyHistory.Lease lease = scopeRecord(scope0).lease();
        assertThat(lease.holder().task()).isEqualTo("b");
        assertThat(lease.electionNode()).isNotEqualTo(bNode);
        assertThat(client.checkExists().forPath(lease.electionNode())).as("its new election node").isNotNull();
        assertThat(b.cross(delivers("receipt-b"))).isInstanceOf(Crossing.Crossed.class);
        assertThat(deliveries).hasValue(1);
    }

    /**
     * Whether the election under {@code latchPath} has a node other than {@code holderNode}; read through a
     * client of its own ({@link #observer}), as a gate's threads call the clock that asks it.
     */
    static boolean hasMemberNode(String latchPath, String holderNode) {
        try {
            return observer().getChildren().forPath(latchPath).stream().anyMatch(name -> !holderNode.endsWith("/" + name));
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void witnessUnreadableRightAfterTheLeaseFlush_stopsTheExecutorUnavailable_releasesTheLease_andDeliversNothing()
            throws Exception {
        // Given a rollback witness that turns unreadable when it is flushed (its store failed), readable before
        ZxidMarks inMemory = ZxidMarks.inMemory();
        AtomicBoolean broken = new AtomicBoolean();
        ZxidMarks failingOnFlush = new ZxidMarks() {
            @Override
            public long highest(String namespace, String genesisId) {
                return inMemory.highest(namespace, genesisId);
            }

            @Override
            public void observe(String namespace, String genesisId, long zxid) {
                inMemory.observe(namespace, genesisId, zxid);
            }

            @Override
            public void flush() {
                broken.set(true);
            }

            @Override
            public Optional<String> unreadable() {
                return broken.get() ? Optional.of("the marks file could not be written: disk full") : Optional.empty();
            }
        };

        // When a contender takes the lease (its write's zxid is flushed to the witness)
        try (Attempt a = gate(Gate.builder(client).namespace(ns).taskId("a").zxidMarks(failingOnFlush)).enter(key)) {
            // Then it stops unavailable on the witness before anything is armed: a rollback would go unseen
            assertThat(a.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
                assertThat(s.reason()).isEqualTo(StopReason.MARKS_UNREADABLE);
                assertThat(s.evidence().detail()).contains("disk full");
                assertThat(s.evidence().path()).isEqualTo(scope0);
            });
        }
        assertThat(broken).as("the lease was written and flushed").isTrue();
        assertThat(client.checkExists().forPath(scope0).getVersion()).as("leased, then released").isEqualTo(2);
        assertThat(scopeRecord(scope0).lease()).isNull();
        assertThat(client.checkExists().forPath(Layout.armed(scope0))).isNull();
        assertThat(deliveries).hasValue(0);
    }

    @Test
    void authorizationCreatedWhileAContenderWaitsOnAnArmedScope_theWaiterOpensTheNextScopeAndProceedsThere()
            throws Exception {
        // Given A armed scope 0 and its action is still running
        CountDownLatch release = new CountDownLatch(1);
        Attempt a = gate("a").enter(key);
        attempts.add(a);
        CompletableFuture<Crossing> aCrossing = crossWhenReleased(a, release, () -> ActionResult.unconfirmed("no receipt"));
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> client.checkExists().forPath(Layout.armed(scope0)) != null);
            // and B waits on the armed scope (consumed, no outcome yet)
            CompletableFuture<Attempt> waiting = enterAsync(gate("b"), Duration.ofSeconds(60));
            awaitStillWaiting(waiting);

            // When an operator authorizes a redelivery after scope 0
            Operator operator = Operator.builder(client).namespace(ns).build();
            assertThat(operator.authorize(key.key(), 0, "alice", "the customer never got it").created()).isTrue();

            // Then B, still waiting, opens scope 1 with it and proceeds there, long before its deadline
            Attempt b = waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
            assertThat(scopeRecord(Layout.scope(keyPath, 1)).opened()).isEqualTo("after-0");
            assertThat(b.cross(delivers("receipt-b"))).isInstanceOfSatisfying(Crossing.Crossed.class,
                    c -> assertThat(c.scope()).isEqualTo(1));
        } finally {
            release.countDown();
        }
        assertThat(aCrossing.get(30, TimeUnit.SECONDS)).isInstanceOfSatisfying(Crossing.Crossed.class,
                c -> assertThat(c.outcome()).isEqualTo(Outcome.SEND_STATUS_UNKNOWN));
        assertThat(deliveries).hasValue(2);
    }

    /**
     * The outcome is a write of {@code armed/outcome}, below the scope: it changes neither the scope's
     * data nor its children. Under a 4 minute TTL the safety re-read comes every minute, three times
     * {@link #PROMPTLY}, so only a watch on the outcome itself wakes the waiter in time.
     */
    @Test
    void outcomeRecordedWhileAContenderWaitsOnTheArmedScope_wakesTheWaiter_longBeforeItsReRead() throws Exception {
        // Given A armed scope 0 under a 4 minute TTL and its action is still running, and B waits on the armed scope
        Duration ttl = Duration.ofMinutes(4);
        CountDownLatch release = new CountDownLatch(1);
        Attempt a = gate(Gate.builder(client).namespace(ns).taskId("a").leaseTtl(ttl)).enter(key);
        attempts.add(a);
        CompletableFuture<Crossing> aCrossing = crossWhenReleased(a, release, () -> {
            throw new ProvenNotSentException("the provider refused the upload: nothing sent");
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> client.checkExists().forPath(Layout.armed(scope0)) != null);
        CompletableFuture<Attempt> waiting = enterAsync(gate(Gate.builder(client).namespace(ns).taskId("b").leaseTtl(ttl)),
                Duration.ofMinutes(3));
        awaitStillWaiting(waiting);

        // When A's action proves not_sent (the outcome is recorded, scope 1 opened)
        release.countDown();
        assertThat(aCrossing.get(30, TimeUnit.SECONDS)).isInstanceOfSatisfying(Crossing.Crossed.class,
                c -> assertThat(c.outcome()).isEqualTo(Outcome.NOT_SENT));

        // Then B learns it at once and proceeds in scope 1, not at its next re-read a minute on
        Attempt b = waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
        assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
        assertThat(b.cross(delivers("receipt-b"))).isInstanceOfSatisfying(Crossing.Crossed.class,
                c -> assertThat(c.scope()).isEqualTo(1));
        assertThat(deliveries).hasValue(2);
    }

    @Test
    void creatorWhoseScopeZeroEndsNotSentUnderAnother_proceedsInScopeOne_andTellsTheActionTheKeysCreationZxid()
            throws Exception {
        // Given A creates the key, and before its election node exists (its gate's ZooKeeper seam holds A's first
        // join while the rest happens: a real server, a schedule) B takes scope 0's lease and proves not_sent
        AtomicBoolean held = new AtomicBoolean();
        ZooKeeperOps real = new CuratorOps(client, "a");
        ZooKeeperOps holdingFirstJoin = (ZooKeeperOps) java.lang.reflect.Proxy.newProxyInstance(
                ZooKeeperOps.class.getClassLoader(), new Class<?>[] {ZooKeeperOps.class}, (proxy, method, args) -> {
                    if (method.getName().equals("joinElection") && held.compareAndSet(false, true)) {
                        try (Attempt b = gate("b").enter(key, Duration.ofSeconds(30))) {
                            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class,
                                    p -> assertThat(p.scope()).isZero());
                            assertThat(b.cross(ctx -> {
                                deliveries.incrementAndGet();
                                throw new ProvenNotSentException("rate limited, nothing sent");
                            })).isInstanceOfSatisfying(Crossing.Crossed.class,
                                    c -> assertThat(c.outcome()).isEqualTo(Outcome.NOT_SENT));
                        }
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        Gate creator = new DefaultGate(holdingFirstJoin, ns, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
                java.time.Clock.systemUTC(), Duration.ofSeconds(30), Duration.ofSeconds(15), "a", "test", 1, false,
                ZxidMarks.inMemory());
        gates.add(creator);

        // When A, the key's creator, goes on contending
        AtomicReference<BoundaryAction.Context> told = new AtomicReference<>();
        try (Attempt a = creator.enter(key, Duration.ofSeconds(30))) {
            // Then it proceeds in scope 1, which B's not_sent opened, and the action is told the key's creation
            // zxid (the idempotency key's seed), not scope 1's
            assertThat(held).as("B went first").isTrue();
            assertThat(a.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
            assertThat(a.cross(ctx -> {
                deliveries.incrementAndGet();
                told.set(ctx);
                return ActionResult.verified("receipt-a");
            })).isInstanceOf(Crossing.Crossed.class);
        }
        long keyCzxid = client.checkExists().forPath(keyPath).getCzxid();
        assertThat(client.checkExists().forPath(Layout.scope(keyPath, 1)).getCzxid()).isNotEqualTo(keyCzxid);
        assertThat(told.get().scope()).isEqualTo(1);
        assertThat(told.get().keyZxid()).isEqualTo(keyCzxid);
        assertThat(deliveries).hasValue(2);
    }

    @Test
    void holderLeavesWithoutCrossing_theWaiterProceedsWellWithinTheLeaseTtl() throws Exception {
        // Given A holds the lease of scope 0 under a 4 minute TTL, and B waits behind it in the election
        Duration ttl = Duration.ofMinutes(4);
        Attempt a = gate(Gate.builder(client).namespace(ns).taskId("a").leaseTtl(ttl)).enter(key);
        attempts.add(a);
        assertThat(a.decision()).isInstanceOf(Decision.Proceed.class);
        CompletableFuture<Attempt> waiting = enterAsync(gate(Gate.builder(client).namespace(ns).taskId("b").leaseTtl(ttl)),
                Duration.ofMinutes(3));
        awaitStillWaiting(waiting);

        // When A leaves without crossing (its lease released, its election node gone)
        a.close();

        // Then B proceeds in scope 0 at once, not when A's lease would have lapsed, and delivers
        Attempt b = waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
        assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
        assertThat(b.cross(delivers("receipt-b"))).isInstanceOf(Crossing.Crossed.class);
        assertThat(deliveries).hasValue(1);
    }

    /** Scope 0 leased by hand to a holder (task x) whose election node {@code node} is given, for {@code ttl}. */
    void leaseByHand(String node, Duration ttl) throws Exception {
        Records.Scope open = scopeRecord(scope0);
        client.setData().forPath(scope0, Records.scope(open.withLease(new KeyHistory.Lease(
                new Actor("x", "elsewhere", 1, "1", Records.newAttemptId()), node, Instant.now().plus(ttl), null))));
    }

    /** The key, created and its scope 0 left open by a contender that did not cross. */
    void openKey() throws Exception {
        try (Attempt first = gate("creator").enter(key)) {
            assertThat(first.decision()).isInstanceOf(Decision.Proceed.class);
        }
    }

    @Test
    void holderWhoseSessionEnds_wakesTheWaiterOutsideTheElectionByItsNode_whichTakesTheLeaseOverAbandoned() throws Exception {
        // Given scope 0 leased for 10 minutes by a holder whose election node is its own session's, and B waiting
        // outside the election behind it, under a 4 minute TTL (unprompted, a waiter re-reads only every TTL/4: a minute)
        openKey();
        CuratorFramework holder = CuratorFrameworkFactory.newClient(zk.server().getConnectString(), 6000, 3000,
                new RetryOneTime(100));
        holder.start();
        CompletableFuture<Attempt> waiting;
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try {
            String holderNode = holder.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(Layout.latch(scope0) + "/_c_" + UUID.randomUUID() + "-latch-");
            leaseByHand(holderNode, Duration.ofMinutes(10));
            waiting = enterAsync(gate(Gate.builder(client).namespace(ns).taskId("b").leaseTtl(Duration.ofMinutes(4))
                    .meterRegistry(registry)), Duration.ofMinutes(3));
            await().atMost(Duration.ofSeconds(10)).until(() -> watchedUnder(keyPath).contains(holderNode));
            awaitStillWaiting(waiting);

            // When the holder's session ends (its process died): its election node goes, its lease stays
        } finally {
            holder.close();
        }

        // Then B, woken by the holder's node (the scope did not change), joins, leads, and takes the lease over as
        // abandoned, long before its first unprompted re-read
        Attempt b = waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
        assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
        KeyHistory.Lease lease = scopeRecord(scope0).lease();
        assertThat(lease.holder().task()).isEqualTo("b");
        assertThat(lease.takeover().cause()).isEqualTo("abandoned");
        assertThat(lease.takeover().from().task()).isEqualTo("x");
        assertThat(registry.get(GateMetrics.TAKEOVERS).tag("cause", "abandoned").counter().count()).isEqualTo(1);
        assertThat(b.cross(delivers("receipt-b"))).isInstanceOf(Crossing.Crossed.class);
        assertThat(deliveries).hasValue(1);
    }

    /** The paths under {@code prefix} that the shared client holds a watch on (data, exists or children). */
    static List<String> watchedUnder(String prefix) throws Exception {
        org.apache.zookeeper.ZooKeeper handle = client.getZookeeperClient().getZooKeeper();
        List<String> paths = new ArrayList<>(WatchersDebug.getDataWatches(handle));
        paths.addAll(WatchersDebug.getExistWatches(handle));
        paths.addAll(WatchersDebug.getChildWatches(handle));
        return paths.stream().filter(p -> p.startsWith(prefix)).distinct().toList();
    }

    @Test
    void waiterBehindALiveHolder_sendsNothingWhileNothingChanges_andOnceGoneLeavesNoWatch_andItsGateForgetsIt()
            throws Exception {
        // Given A holds scope 0's lease under a 4 minute TTL, and B waits behind it (outside the election, watching
        // the scope and A's election node), B's gate recording what B sends
        Duration ttl = Duration.ofMinutes(4);
        Attempt a = gate(Gate.builder(client).namespace(ns).taskId("a").leaseTtl(ttl)).enter(key);
        attempts.add(a);
        String holderNode = scopeRecord(scope0).lease().electionNode();
        RecordingOps seam = new RecordingOps(client, "b");
        DefaultGate b = seam.gate(ns, "b", java.time.Clock.systemUTC(), ttl, new SimpleMeterRegistry());
        gates.add(b);
        AtomicReference<Throwable> ended = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                b.enter(key, Duration.ofMinutes(3));
            } catch (Throwable t) {
                ended.set(t);
            }
        }, "waiter-b");
        waiter.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> watchedUnder(keyPath).containsAll(List.of(scope0, holderNode)));

        // Then, while nothing it watches changes, B sends ZooKeeper nothing (but the end of its settling): its
        // watches wake it, it does not poll
        int sent = seam.calls().size();
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> seam.calls().size() <= sent + 3);
        assertThat(waiter.isAlive()).as("still waiting").isTrue();

        // When B's caller gives up on it (interrupts it): the gate closes the attempt
        waiter.interrupt();
        waiter.join(10_000);
        assertThat(ended.get()).isInstanceOf(InterruptedException.class);

        // Then the client holds none of B's watches (on the scope, on A's node), and B's gate no attempt
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(watchedUnder(keyPath)).isEmpty());
        assertThat(b.liveAttempts()).isZero();
        assertThat(scopeRecord(scope0).lease().holder().task()).as("A's lease, untouched").isEqualTo("a");
    }

    @Test
    void contenderThatOpensAnAuthorizedScope_joinsItsElectionAtOnce_withoutTheGraceItGivesAnotherOpener() throws Exception {
        // Given scope 0 ended send_status_unknown, and an operator authorized a redelivery after it
        try (Attempt a = gate("a").enter(key)) {
            a.cross(ctx -> {
                deliveries.incrementAndGet();
                return ActionResult.unconfirmed("no receipt");
            });
        }
        Operator operator = Operator.builder(client).namespace(ns).build();
        assertThat(operator.authorize(key.key(), 0, "alice", "the customer never got it").created()).isTrue();

        // When B, whose clock stands still (a grace it gives others never ends), enters and opens scope 1
        CompletableFuture<Attempt> entering = enterAsync(gate(Gate.builder(client).namespace(ns).taskId("b")
                .clock(java.time.Clock.fixed(Instant.now(), java.time.ZoneOffset.UTC))), Duration.ZERO);

        // Then it proceeds there at once: the grace is for others, to let the scope's opener join first
        Attempt b = entering.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
        assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
        assertThat(scopeRecord(Layout.scope(keyPath, 1)).opened()).isEqualTo("after-0");
        assertThat(b.cross(delivers("receipt-b"))).isInstanceOf(Crossing.Crossed.class);
        assertThat(deliveries).hasValue(2);
    }
}
