package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.BeforeEach;

/**
 * A protocol test whose key exists: helpers to take scope 0's lease and arm it as an executor
 * does, one write at a time, so a test can put anything between two of them.
 */
abstract class ArmedScopeFixture extends OneNamespacePerTest {

    @BeforeEach
    void existingKey() throws Exception {
        protocol.executor().ensureKey(key, genesisId);
    }

    /** An election node, named as a LeaderLatch names its own: a protected name, unique to the latch. */
    String electionNode(int scope) throws Exception {
        return client.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(Layout.latch(Layout.scope(keyPath, scope)) + "/_c_" + java.util.UUID.randomUUID() + "-latch-");
    }

    static Actor actor(String attempt) {
        return new Actor("t", "h", 1, "1", attempt);
    }

    static Records.Scope lease(String attempt, String node) {
        return new Records.Scope("initial", Instant.now(), new KeyHistory.Lease(actor(attempt), node,
                Instant.now().plusSeconds(30), null), false, false);
    }

    static KeyHistory.Armed armedRecord(String attempt, FencingToken token) {
        return new KeyHistory.Armed(actor(attempt), token, List.of(), Instant.now());
    }

    /** deleteall KEY, then a fresh key with the same name: scope 0 starts again at version 0. */
    void recreateKey() throws Exception {
        client.delete().deletingChildrenIfNeeded().forPath(keyPath);
        protocol.executor().ensureKey(key, genesisId);
    }

    /**
     * Scope 0's lease as {@code attempt} holds it between its decision and arming: its election
     * node, the scope's path, the leased record, the token the lease write returned and the scope's
     * creation zxid (which names its armed record).
     */
    record Held(String attempt, String node, String scopePath, Records.Scope leased, FencingToken token, long czxid) {
    }

    /**
     * An arming that succeeded: the scope's version after it, its armed record, the secret it
     * committed to, and the executor's election node.
     */
    record Armed(int version, String path, String secret, String node) {
    }

    /** Joins scope 0's election and takes its lease as {@code attempt}. */
    Held leaseScopeZero(String attempt) throws Exception {
        return leaseScope(0, attempt);
    }

    /** Joins scope {@code n}'s election and takes its lease as {@code attempt}. */
    Held leaseScope(int n, String attempt) throws Exception {
        String node = electionNode(n);
        String scopePath = Layout.scope(keyPath, n);
        ScopeView view = protocol.reads().readScope(keyPath, n);
        Records.Scope leased = lease(attempt, node);
        ExecutorWrites.LeaseWrite write = protocol.executor().writeLease(scopePath, view.version(), leased, node);
        return new Held(attempt, node, scopePath, leased, write.token(), write.czxid());
    }

    /** The arming write of {@code held}, as its executor sends it, committing to {@code secret}. */
    ExecutorWrites.Arming arm(Held held, String secret) throws Exception {
        return protocol.executor().arm(held.scopePath(), held.token(), held.node(), genesisId, armedScope(held.leased()),
                armedRecord(held.attempt(), held.token()), secret, Duration.ofSeconds(10));
    }

    ExecutorWrites.Arming arm(Held held) throws Exception {
        return arm(held, Records.newSecret());
    }

    /** Takes the lease of scope 0 and arms it as {@code attempt}. */
    Armed armAs(String attempt) throws Exception {
        return armAs(0, attempt);
    }

    /** Takes the lease of scope {@code n} and arms it as {@code attempt}. */
    Armed armAs(int n, String attempt) throws Exception {
        Held held = leaseScope(n, attempt);
        String secret = Records.newSecret();
        ExecutorWrites.Arming arming = arm(held, secret);
        assertThat(arming.armed()).as("arming as " + attempt).isTrue();
        String path = Layout.armed(held.scopePath());
        assertThat(client.checkExists().forPath(path)).isNotNull();
        return new Armed(arming.armedVersion(), path, secret, held.node());
    }

    static Records.Scope armedScope(Records.Scope leased) {
        return leased.armedNow();
    }

    static KeyHistory.OutcomeRecord outcome(Outcome o, String attempt) {
        return new KeyHistory.OutcomeRecord(o, "test", actor(attempt), new FencingToken(1, 1), Instant.now());
    }
}
