package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Clock;

import org.junit.jupiter.api.Test;

/**
 * The protocol's writes, one by one, against a real server: a version alone cannot tell a
 * recreated znode from the one a token was issued for, so every executor write must fail once
 * the incarnation it was decided in is gone — even when the new incarnation's version matches.
 */
class IncarnationBindingTest extends ArmedScopeFixture {

    @Test
    void genesisMarker_isWrittenWithTheGenesis_andInitAddsItToAnOldGenesis() throws Exception {
        assertThat(protocol.reads().genesisMarkerExists(genesisId)).isTrue();
        client.delete().forPath(Layout.genesisMarker(ns, genesisId));

        OperatorWrites.GenesisResult again = protocol.operator().createGenesis(null);

        assertThat(again.created()).isFalse();
        assertThat(again.genesis().id()).isEqualTo(genesisId);
        assertThat(protocol.reads().genesisMarkerExists(genesisId)).isTrue();
    }

    @Test
    void keyCreation_inAReinitialisedNamespace_isRefused() throws Exception {
        client.delete().deletingChildrenIfNeeded().forPath(ns);
        new ScopeProtocol(client, ns, Clock.systemUTC(), z -> { }, () -> Acls.OPEN).operator().createGenesis(null); // another genesis id

        assertThatThrownBy(() -> protocol.executor().ensureKey(key, genesisId)).isInstanceOfSatisfying(StopException.class,
                e -> assertThat(e.stop().reason()).isEqualTo(StopReason.NAMESPACE_REPLACED));
        assertThat(client.checkExists().forPath(keyPath)).isNull();
    }

    @Test
    void leaseCas_decidedOnAReadOfTheOldIncarnation_failsOnTheNewOneEvenAtTheSameVersion() throws Exception {
        // Given a contender whose election node existed before it read scope 0 at version 0
        String staleNode = electionNode(0);
        ScopeView read = protocol.reads().readScope(keyPath, 0);
        assertThat(read.version()).isZero();
        // When the key is deleted and recreated: the new scope 0 is again at version 0
        recreateKey();
        assertThat(protocol.reads().readScope(keyPath, 0).version()).isZero();

        // Then the CAS bound to the old election node fails, and the new scope is untouched
        ExecutorWrites.LeaseWrite write = protocol.executor().writeLease(read.path(), 0, lease("a", staleNode), staleNode);
        assertThat(write.written()).isFalse();
        assertThat(write.refusal()).isEqualTo(ExecutorWrites.LeaseRefusal.ELECTION_NODE_GONE);
        assertThat(protocol.reads().readScope(keyPath, 0).data().lease()).isNull();
    }

    @Test
    void leaseCas_inItsOwnIncarnation_takesTheLease_andAStaleVersionIsFenced() throws Exception {
        String node = electionNode(0);
        ExecutorWrites.LeaseWrite first = protocol.executor().writeLease(Layout.scope(keyPath, 0), 0, lease("a", node), node);
        ExecutorWrites.LeaseWrite stale = protocol.executor().writeLease(Layout.scope(keyPath, 0), 0, lease("b", node), node);

        assertThat(first.token().version()).isEqualTo(1);
        assertThat(stale.refusal()).isEqualTo(ExecutorWrites.LeaseRefusal.VERSION_MOVED);
    }

    @Test
    void arming_afterTheNamespaceWasReinitialised_isRefusedAtTheGenesisId() throws Exception {
        Held held = leaseScopeZero("a");
        // the genesis is replaced, the keys stay (an operator re-initialised after a restore)
        client.delete().deletingChildrenIfNeeded().forPath(Layout.genesis(ns));
        new ScopeProtocol(client, ns, Clock.systemUTC(), z -> { }, () -> Acls.OPEN).operator().createGenesis(null);

        ExecutorWrites.Arming arming = arm(held);

        assertThat(arming.refusal()).isEqualTo(ExecutorWrites.ArmRefusal.NAMESPACE_REPLACED);
        assertThat(client.getChildren().forPath(held.scopePath())).noneMatch(c -> c.startsWith("armed"));
    }

    @Test
    void arming_withTheElectionNodeGone_isRefused_evenThoughTheVersionMatches() throws Exception {
        Held held = leaseScopeZero("a");
        client.delete().forPath(held.node()); // its session ended, or the key was deleted

        ExecutorWrites.Arming arming = arm(held);

        assertThat(arming.refusal()).isEqualTo(ExecutorWrites.ArmRefusal.ELECTION_NODE_GONE);
        assertThat(protocol.reads().readScope(keyPath, 0).data().armed()).isFalse();
    }

    @Test
    void outcome_ofAnExecutorFromTheOldIncarnation_neverLandsInTheRecreatedScope() throws Exception {
        // Given executor A armed scope 0 (version 2) and is inside its action
        Armed armedA = armAs("a");
        // When the key is deleted and recreated, and executor B arms the new scope 0 — at the same version
        recreateKey();
        Armed armedB = armAs("b");
        assertThat(armedB.version()).isEqualTo(armedA.version());

        // Then A's outcome (not_sent, which would also open scope 1) is refused: its armed record is gone
        ExecutorWrites.OutcomeWrite a = protocol.executor().recordOutcome(keyPath, 0, armedA.node(), outcome(Outcome.NOT_SENT, "a"),
                armedA.secret());
        assertThat(a).isEqualTo(ExecutorWrites.OutcomeWrite.ARMED_RECORD_GONE);
        assertThat(client.getData().forPath(Layout.outcome(Layout.scope(keyPath, 0)))).as("B's, not written yet").isEmpty();
        assertThat(client.checkExists().forPath(Layout.scope(keyPath, 1))).isNull();
        // and B's is recorded
        assertThat(protocol.executor().recordOutcome(keyPath, 0, armedB.node(), outcome(Outcome.SENT_VERIFIED, "b"), armedB.secret()))
                .isEqualTo(ExecutorWrites.OutcomeWrite.RECORDED);
        assertThat(protocol.reads().readScope(keyPath, 0).outcome().by().attempt()).isEqualTo("b");
    }

    @Test
    void outcome_afterTheScopeWasRewritten_isStillRecorded_theScopeDataDecidesNothingOnceArmed() throws Exception {
        String scopePath = Layout.scope(keyPath, 0);
        Armed armed = armAs("a");
        byte[] data = client.getData().forPath(scopePath);
        client.setData().forPath(scopePath, data); // same bytes, new version (what a worker credential may do)

        assertThat(protocol.executor().recordOutcome(keyPath, 0, armed.node(), outcome(Outcome.SENT_VERIFIED, "a"), armed.secret()))
                .isEqualTo(ExecutorWrites.OutcomeWrite.RECORDED);
        assertThat(protocol.reads().readScope(keyPath, 0).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }

    @Test
    void secondArming_ofOneScopeIncarnation_meetsTheArmedRecord_whateverTheScopeDataSays() throws Exception {
        // Given A armed scope 0, and someone wrote the scope's data back to an open lease for B
        Armed armedA = armAs("a");
        Held b = leaseScopeZero("b"); // a CAS on the rewritten data: the data is a worker's to write

        // When B arms
        ExecutorWrites.Arming arming = arm(b);

        // Then the armed record A created is the barrier: B is refused and nothing of B's is written
        assertThat(arming.refusal()).isEqualTo(ExecutorWrites.ArmRefusal.ALREADY_ARMED);
        assertThat(client.getChildren().forPath(Layout.scope(keyPath, 0))).filteredOn(c -> c.startsWith("armed"))
                .containsExactly("armed");
        assertThat(Records.decodeArmed(armedA.path(), client.getData().forPath(armedA.path())).commitment())
                .as("A's armed record").isEqualTo(Records.commitment(armedA.secret()));
        assertThat(protocol.reads().readScope(keyPath, 0).state()).isEqualTo(ScopeState.ARMED);
    }

    @Test
    void notSentOutcome_whenAnAuthorizationOpenedTheNextScopeAlready_isRecordedWithoutIt() throws Exception {
        Armed armed = armAs("a");
        client.create().forPath(Layout.authorization(keyPath, 0), "{\"by\":\"ops\",\"reason\":\"lost\"}".getBytes(StandardCharsets.UTF_8));
        ScopeView consumed = protocol.reads().readScope(keyPath, 0);
        assertThat(protocol.executor().openAuthorizedScope(keyPath, consumed, protocol.reads().readAuthorization(keyPath, 0)))
                .isEqualTo(ExecutorWrites.Opening.OPENED);

        assertThat(protocol.executor().recordOutcome(keyPath, 0, armed.node(), outcome(Outcome.NOT_SENT, "a"), armed.secret()))
                .isEqualTo(ExecutorWrites.OutcomeWrite.RECORDED);
        assertThat(protocol.reads().readScope(keyPath, 0).state()).isEqualTo(ScopeState.NOT_SENT);
        assertThat(protocol.reads().readScope(keyPath, 1).data().opened()).isEqualTo("after-0");
    }

    @Test
    void authorizedOpening_boundToTheAuthorizationAsRead_opensNothingWhenItWasReplaced() throws Exception {
        armAs("a");
        String auth = Layout.authorization(keyPath, 0);
        client.create().forPath(auth, "{\"by\":\"ops\",\"reason\":\"lost\"}".getBytes(StandardCharsets.UTF_8));
        AuthorizationView read = protocol.reads().readAuthorization(keyPath, 0);
        client.setData().forPath(auth, "{\"by\":\"mallory\",\"reason\":\"x\"}".getBytes(StandardCharsets.UTF_8));

        assertThat(protocol.executor().openAuthorizedScope(keyPath, protocol.reads().readScope(keyPath, 0), read))
                .isEqualTo(ExecutorWrites.Opening.CHANGED);
        assertThat(client.checkExists().forPath(Layout.scope(keyPath, 1))).isNull();
    }

}
