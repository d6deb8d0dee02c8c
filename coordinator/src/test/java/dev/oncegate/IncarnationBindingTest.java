package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The protocol's writes, one by one, against a real server: a version alone cannot tell a
 * recreated znode from the one a token was issued for, so every executor write must fail once
 * the incarnation it was decided in is gone — even when the new incarnation's version matches.
 */
class IncarnationBindingTest extends OneNamespacePerTest {

    @BeforeEach
    void existingKey() throws Exception {
        protocol.ensureKey(key, genesisId);
    }

    /** An election node of our own under the scope, as LeaderLatch would create it. */
    String electionNode(int scope) throws Exception {
        return client.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(Layout.latch(Layout.scope(keyPath, scope)) + "/_c_test-latch-");
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
        protocol.ensureKey(key, genesisId);
    }

    @Test
    void genesisMarker_isWrittenWithTheGenesis_andInitAddsItToAnOldGenesis() throws Exception {
        assertThat(protocol.genesisMarkerExists(genesisId)).isTrue();
        client.delete().forPath(Layout.genesisMarker(ns, genesisId));

        ScopeProtocol.GenesisResult again = protocol.createGenesis(null);

        assertThat(again.created()).isFalse();
        assertThat(again.genesis().id()).isEqualTo(genesisId);
        assertThat(protocol.genesisMarkerExists(genesisId)).isTrue();
    }

    @Test
    void keyCreation_inAReinitialisedNamespace_isRefused() throws Exception {
        client.delete().deletingChildrenIfNeeded().forPath(ns);
        new ScopeProtocol(client, ns, Clock.systemUTC(), z -> { }, () -> Acls.OPEN).createGenesis(null); // another genesis id

        assertThatThrownBy(() -> protocol.ensureKey(key, genesisId)).isInstanceOfSatisfying(StopException.class,
                e -> assertThat(e.stop().reason()).isEqualTo(StopReason.NAMESPACE_REPLACED));
        assertThat(client.checkExists().forPath(keyPath)).isNull();
    }

    @Test
    void leaseCas_decidedOnAReadOfTheOldIncarnation_failsOnTheNewOneEvenAtTheSameVersion() throws Exception {
        // Given a contender whose election node existed before it read scope 0 at version 0
        String staleNode = electionNode(0);
        ScopeView read = protocol.readScope(keyPath, 0, null);
        assertThat(read.version()).isZero();
        // When the key is deleted and recreated: the new scope 0 is again at version 0
        recreateKey();
        assertThat(protocol.readScope(keyPath, 0, null).version()).isZero();

        // Then the CAS bound to the old election node fails, and the new scope is untouched
        ScopeProtocol.LeaseWrite write = protocol.writeLease(read.path(), 0, lease("a", staleNode), staleNode);
        assertThat(write.written()).isFalse();
        assertThat(write.refusal()).isEqualTo(ScopeProtocol.LeaseRefusal.ELECTION_NODE_GONE);
        assertThat(protocol.readScope(keyPath, 0, null).data().lease()).isNull();
    }

    @Test
    void leaseCas_inItsOwnIncarnation_takesTheLease_andAStaleVersionIsFenced() throws Exception {
        String node = electionNode(0);
        ScopeProtocol.LeaseWrite first = protocol.writeLease(Layout.scope(keyPath, 0), 0, lease("a", node), node);
        ScopeProtocol.LeaseWrite stale = protocol.writeLease(Layout.scope(keyPath, 0), 0, lease("b", node), node);

        assertThat(first.token().version()).isEqualTo(1);
        assertThat(stale.refusal()).isEqualTo(ScopeProtocol.LeaseRefusal.VERSION_MOVED);
    }

    @Test
    void arming_afterTheNamespaceWasReinitialised_isRefusedAtTheGenesisId() throws Exception {
        Held held = leaseScopeZero("a");
        // the genesis is replaced, the keys stay (an operator re-initialised after a restore)
        client.delete().deletingChildrenIfNeeded().forPath(Layout.genesis(ns));
        new ScopeProtocol(client, ns, Clock.systemUTC(), z -> { }, () -> Acls.OPEN).createGenesis(null);

        ScopeProtocol.Arming arming = arm(held);

        assertThat(arming.refusal()).isEqualTo(ScopeProtocol.ArmRefusal.NAMESPACE_REPLACED);
        assertThat(client.getChildren().forPath(held.scopePath())).noneMatch(c -> c.startsWith("armed-"));
    }

    @Test
    void arming_withTheElectionNodeGone_isRefused_evenThoughTheVersionMatches() throws Exception {
        Held held = leaseScopeZero("a");
        client.delete().forPath(held.node()); // its session ended, or the key was deleted

        ScopeProtocol.Arming arming = arm(held);

        assertThat(arming.refusal()).isEqualTo(ScopeProtocol.ArmRefusal.ELECTION_NODE_GONE);
        assertThat(protocol.readScope(keyPath, 0, null).data().armed()).isFalse();
    }

    @Test
    void outcome_ofAnExecutorFromTheOldIncarnation_neverLandsInTheRecreatedScope() throws Exception {
        // Given executor A armed scope 0 (version 2) and is inside its action
        String scopePath = Layout.scope(keyPath, 0);
        int armedA = armAs("a");
        // When the key is deleted and recreated, and executor B arms the new scope 0 — at the same version
        recreateKey();
        int armedB = armAs("b");
        assertThat(armedB).isEqualTo(armedA);

        // Then A's outcome (not_sent, which would also open scope 1) is refused: its armed record is gone
        ScopeProtocol.OutcomeWrite a = protocol.recordOutcome(keyPath, 0, armedA, Layout.armed(scopePath, "a"),
                outcome(Outcome.NOT_SENT, "a"));
        assertThat(a).isEqualTo(ScopeProtocol.OutcomeWrite.ARMED_RECORD_GONE);
        assertThat(client.checkExists().forPath(Layout.outcome(scopePath))).isNull();
        assertThat(client.checkExists().forPath(Layout.scope(keyPath, 1))).isNull();
        // and B's is recorded
        assertThat(protocol.recordOutcome(keyPath, 0, armedB, Layout.armed(scopePath, "b"), outcome(Outcome.SENT_VERIFIED, "b")))
                .isEqualTo(ScopeProtocol.OutcomeWrite.RECORDED);
        assertThat(protocol.readScope(keyPath, 0, null).outcome().by().attempt()).isEqualTo("b");
    }

    @Test
    void outcome_afterTheScopeWasRewritten_isNotRecorded() throws Exception {
        String scopePath = Layout.scope(keyPath, 0);
        int armed = armAs("a");
        byte[] data = client.getData().forPath(scopePath);
        client.setData().forPath(scopePath, data); // same bytes, new version

        assertThat(protocol.recordOutcome(keyPath, 0, armed, Layout.armed(scopePath, "a"), outcome(Outcome.SENT_VERIFIED, "a")))
                .isEqualTo(ScopeProtocol.OutcomeWrite.SCOPE_CHANGED);
        assertThat(client.checkExists().forPath(Layout.outcome(scopePath))).isNull();
    }

    @Test
    void notSentOutcome_whenAnAuthorizationOpenedTheNextScopeAlready_isRecordedWithoutIt() throws Exception {
        String scopePath = Layout.scope(keyPath, 0);
        int armed = armAs("a");
        client.create().forPath(Layout.authorization(keyPath, 0), "{\"by\":\"ops\",\"reason\":\"lost\"}".getBytes(StandardCharsets.UTF_8));
        ScopeView consumed = protocol.readScope(keyPath, 0, null);
        assertThat(protocol.openAuthorizedScope(keyPath, consumed, protocol.readAuthorization(keyPath, 0)))
                .isEqualTo(ScopeProtocol.Opening.OPENED);

        assertThat(protocol.recordOutcome(keyPath, 0, armed, Layout.armed(scopePath, "a"), outcome(Outcome.NOT_SENT, "a")))
                .isEqualTo(ScopeProtocol.OutcomeWrite.RECORDED);
        assertThat(protocol.readScope(keyPath, 0, null).state()).isEqualTo(ScopeState.NOT_SENT);
        assertThat(protocol.readScope(keyPath, 1, null).data().opened()).isEqualTo("after-0");
    }

    @Test
    void authorizedOpening_boundToTheAuthorizationAsRead_opensNothingWhenItWasReplaced() throws Exception {
        armAs("a");
        String auth = Layout.authorization(keyPath, 0);
        client.create().forPath(auth, "{\"by\":\"ops\",\"reason\":\"lost\"}".getBytes(StandardCharsets.UTF_8));
        AuthorizationView read = protocol.readAuthorization(keyPath, 0);
        client.setData().forPath(auth, "{\"by\":\"mallory\",\"reason\":\"x\"}".getBytes(StandardCharsets.UTF_8));

        assertThat(protocol.openAuthorizedScope(keyPath, protocol.readScope(keyPath, 0, null), read))
                .isEqualTo(ScopeProtocol.Opening.CHANGED);
        assertThat(client.checkExists().forPath(Layout.scope(keyPath, 1))).isNull();
    }

    /**
     * Scope 0's lease as {@code attempt} holds it between its decision and arming: its election
     * node, the scope's path, the leased record and the token the lease write returned.
     */
    record Held(String attempt, String node, String scopePath, Records.Scope leased, FencingToken token) {
    }

    /** Joins scope 0's election and takes its lease as {@code attempt}. */
    Held leaseScopeZero(String attempt) throws Exception {
        String node = electionNode(0);
        String scopePath = Layout.scope(keyPath, 0);
        ScopeView view = protocol.readScope(keyPath, 0, null);
        Records.Scope leased = lease(attempt, node);
        FencingToken token = protocol.writeLease(scopePath, view.version(), leased, node).token();
        return new Held(attempt, node, scopePath, leased, token);
    }

    /** The arming write of {@code held}, as its executor sends it. */
    ScopeProtocol.Arming arm(Held held) throws Exception {
        return protocol.arm(held.scopePath(), held.token(), held.node(), genesisId, armedScope(held.leased()),
                armedRecord(held.attempt(), held.token()), Duration.ofSeconds(10));
    }

    /** Takes the lease of scope 0 and arms it as {@code attempt}; returns the armed version. */
    int armAs(String attempt) throws Exception {
        Held held = leaseScopeZero(attempt);
        ScopeProtocol.Arming arming = arm(held);
        assertThat(arming.armed()).as("arming as " + attempt).isTrue();
        assertThat(client.checkExists().forPath(Layout.armed(held.scopePath(), attempt))).isNotNull();
        return arming.armedVersion();
    }

    static Records.Scope armedScope(Records.Scope leased) {
        return leased.armedNow();
    }

    static KeyHistory.OutcomeRecord outcome(Outcome o, String attempt) {
        return new KeyHistory.OutcomeRecord(o, "test", actor(attempt), new FencingToken(1, 1), Instant.now());
    }
}
