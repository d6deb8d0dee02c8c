package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import dev.oncegate.StopReason;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/** Shared helpers of the scenario tests: reading ZooKeeper's records and waiting for them. Stateless. */
final class Scenarios {

    private Scenarios() {
    }

    /** A namespace nobody used (or initialised) before, for one test. */
    static String freshNamespace() {
        return "/t-" + UUID.randomUUID();
    }

    /**
     * A fresh effect: a unique file delivered to one Slack channel. For tests without
     * {@link ZooKeeperExtension} (its {@code key()} and {@code newKey()} are the same).
     */
    static EffectKey freshKey() {
        return EffectKey.of(Destination.stable("slack", "C-" + UUID.randomUUID()),
                ("report " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8));
    }

    /** The outcome name recorded for scope n, or null. */
    static String outcomeOf(KeyHistory history, int n) {
        KeyHistory.OutcomeRecord outcome = history.scopes().get(n).outcome();
        return outcome == null ? null : outcome.outcome().wireName();
    }

    /** The outcome name recorded for each scope, in scope order (null for a scope without outcome). */
    static List<String> outcomes(KeyHistory history) {
        List<String> outcomes = new ArrayList<>();
        for (int n = 0; n < history.scopes().size(); n++) {
            outcomes.add(outcomeOf(history, n));
        }
        return outcomes;
    }

    /**
     * Waits until {@code condition} holds. A test client's read that meets a lost connection (after
     * Curator's retries: a loaded machine can stall a session's heartbeat) is "not yet", not a failure:
     * the condition is asked again; every other exception fails the wait at once.
     */
    static void eventually(String what, BooleanSupplier condition) {
        await(what).atMost(Timing.EVENTUALLY).pollInterval(Duration.ofMillis(50))
                .ignoreExceptionsMatching(Scenarios::connectionLoss).until(condition::getAsBoolean);
    }

    private static boolean connectionLoss(Throwable e) {
        return e instanceof IllegalStateException && e.getCause() instanceof KeeperException.ConnectionLossException;
    }

    /**
     * Whether some session watches {@code path} at the server(s): how a test sees that a contender
     * waits. (A contender waits outside the election while a live holder acts, watching the scope;
     * so "in the election" is no longer the sign.)
     */
    static boolean watched(ZooKeeperExtension zk, String path) {
        return zk.isEnsemble() ? zk.ensemble().watchingSessions(path) > 0 : zk.server().watchingSessions(path) > 0;
    }

    /** How many contenders are in scope n's election (children of its latch node). */
    static int latchMembers(CuratorFramework client, String keyPath, int scope) {
        try {
            List<String> children = client.getChildren().forPath(keyPath + "/" + scope + "/latch");
            return children.size();
        } catch (KeeperException.NoNodeException e) {
            return 0;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The armed record of a scope ({@code SCOPE/armed}), or null when the scope was never armed or does not exist. */
    static String armedNode(CuratorFramework client, String scopePath) {
        return exists(client, scopePath + "/armed") ? scopePath + "/armed" : null;
    }

    static boolean exists(CuratorFramework client, String path) {
        try {
            return client.checkExists().forPath(path) != null;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] read(CuratorFramework client, String path) {
        try {
            return client.getData().forPath(path);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Enters on another thread, so the test thread can inject a fault while the contender waits. */
    static Future<Attempt> enterAsync(ExecutorService pool, Gate gate, EffectKey key, Duration wait) {
        return pool.submit(() -> gate.enter(key, wait));
    }

    /** Asserts that arming was refused with a stop of {@code kind} for {@code reason}, so the action never ran. */
    static void assertRefused(Crossing crossing, Class<? extends Decision.Stop> kind, StopReason reason) {
        assertThat(crossing).isInstanceOfSatisfying(Crossing.Refused.class, r -> {
            assertThat(r.stop()).isInstanceOf(kind);
            assertThat(r.stop().reason()).isEqualTo(reason);
        });
    }

    /**
     * Scope 1's lease holder and the next member of its election, both attempts of one gate.
     *
     * @param gate   their gate (one client, one session)
     * @param holder the attempt that proceeded in scope 1 (holding its lease and leading its election)
     * @param member the attempt still entering: a member of scope 1's election behind the holder
     */
    record HolderAndMember(Gate gate, Attempt holder, Future<Attempt> member) {
    }

    /**
     * Puts two attempts of one new gate (lease TTL {@code leaseTtl}) into scope 1's election, one
     * holding its lease and one waiting behind it as the next member (its latch watches the holder's
     * election node): both wait on scope 0 while another worker crosses it, whose not_sent opens
     * scope 1, which they then join together. A contender joins an election only when it may have to
     * act, so this is how two of them end up in one behind a live holder. The holder is tracked
     * (closed after the test); the member waits up to {@link Timing#WAIT}.
     */
    static HolderAndMember holderAndNextMember(ZooKeeperExtension zk, Duration leaseTtl) throws Exception {
        Gate gate = zk.newGate("shared", b -> b.leaseTtl(leaseTtl));
        ExecutorService pool = zk.newPool(2);
        Future<Attempt> a;
        Future<Attempt> b;
        try (CrossingInFlight first = CrossingInFlight.start(zk.newGate("task-z"), zk.key(),
                zk.provider().rejects("the channel was archived"))) {
            assertThat(first.awaitInAction(Timing.EVENTUALLY)).isTrue();
            a = enterAsync(pool, gate, zk.key(), Timing.WAIT);
            b = enterAsync(pool, gate, zk.key(), Timing.WAIT);
            eventually("the gate waits for scope 0's outcome", () -> watched(zk, zk.keyPath() + "/0"));
            first.releaseAndAwait(Timing.EVENTUALLY);
        }
        eventually("one of them holds scope 1", () -> a.isDone() || b.isDone());
        Attempt holder = zk.track((a.isDone() ? a : b).get());
        Future<Attempt> member = a.isDone() ? b : a;
        assertThat(holder.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
        eventually("the other is the next member of scope 1's election", () -> latchMembers(zk.newClient(), zk.keyPath(), 1) == 2);
        assertThat(member.isDone()).isFalse();
        return new HolderAndMember(gate, holder, member);
    }
}
