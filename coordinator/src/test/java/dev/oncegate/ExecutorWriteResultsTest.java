package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * What each executor and operator write reports, against a real server, where a caller's next
 * step depends on it: a lease or outcome write retried after a lost reply recognises its own
 * write (and nobody else's), an arming tells a moved version from a missing scope, an outcome
 * write whose election node is gone still lands when the armed record is the executor's own, an
 * authorized opening tells "already open" from "changed", an authorization retried by its own
 * attempt is its own, and retention removes a key only as it was read.
 */
class ExecutorWriteResultsTest extends ArmedScopeFixture {

    @Test
    void leaseWrite_sentAgainAfterALostReply_recognisesItsOwnWrite_butNotAnothersAtThatVersion() throws Exception {
        String node = electionNode(0);
        String scope0 = Layout.scope(keyPath, 0);
        Records.Scope ours = lease("a", node);
        ExecutorWrites.LeaseWrite first = protocol.executor().writeLease(scope0, 0, ours, node);

        // When the same write is sent again (Curator's retry after a connection loss), and another's at that version
        ExecutorWrites.LeaseWrite retried = protocol.executor().writeLease(scope0, 0, ours, node);
        ExecutorWrites.LeaseWrite other = protocol.executor().writeLease(scope0, 0, lease("b", node), node);

        // Then the retry is ours (same token, the scope's creation zxid), the other is refused
        assertThat(retried.written()).isTrue();
        assertThat(retried.token()).isEqualTo(first.token());
        assertThat(retried.czxid()).isEqualTo(client.checkExists().forPath(scope0).getCzxid()).isEqualTo(first.czxid());
        assertThat(other.written()).isFalse();
        assertThat(other.refusal()).isEqualTo(ExecutorWrites.LeaseRefusal.VERSION_MOVED);
        assertThat(other.czxid()).isZero();
    }

    @Test
    void arming_succeeds_withTheScopesNewVersionAndZxid() throws Exception {
        Held held = leaseScopeZero("a");

        ExecutorWrites.Arming arming = arm(held);

        assertThat(arming.armed()).isTrue();
        assertThat(arming.refusal()).isNull();
        assertThat(arming.armedVersion()).isEqualTo(client.checkExists().forPath(held.scopePath()).getVersion());
        assertThat(arming.zxid()).isEqualTo(client.checkExists().forPath(held.scopePath()).getMzxid());
    }

    @Test
    void arming_afterTheLeaseWasWrittenAgain_isFenced_andWritesNothing() throws Exception {
        Held held = leaseScopeZero("a");
        client.setData().forPath(held.scopePath(), client.getData().forPath(held.scopePath()));

        ExecutorWrites.Arming arming = arm(held);

        assertThat(arming.armed()).isFalse();
        assertThat(arming.refusal()).isEqualTo(ExecutorWrites.ArmRefusal.FENCED);
        assertThat(arming.armedVersion()).isEqualTo(-1);
        assertThat(client.checkExists().forPath(Layout.armed(held.scopePath()))).isNull();
    }

    @Test
    void arming_ofAScopeThatIsGone_isScopeGone() throws Exception {
        // Given a lease held with a node outside the scope (so the node check passes), and the scope removed
        Held held = leaseScopeZero("a");
        String elsewhere = Layout.genesisMarker(ns, genesisId);
        client.delete().deletingChildrenIfNeeded().forPath(held.scopePath());

        ExecutorWrites.Arming arming = arm(new Held(held.attempt(), elsewhere, held.scopePath(), held.leased(), held.token(),
                held.czxid()));

        assertThat(arming.armed()).isFalse();
        assertThat(arming.refusal()).isEqualTo(ExecutorWrites.ArmRefusal.SCOPE_GONE);
    }

    @Test
    void outcome_withTheElectionNodeGone_isRecorded_whenTheArmedRecordIsTheExecutorsOwn() throws Exception {
        // Given A armed scope 0 and its session ended (its election node went with it)
        Armed a = armAs("a");
        client.delete().forPath(a.node());

        // When A records its outcome, Then it lands: the armed record proves the scope is A's
        assertThat(protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.SENT_VERIFIED, "a"), a.secret()))
                .isEqualTo(ExecutorWrites.OutcomeWrite.RECORDED);
        assertThat(protocol.reads().readScope(keyPath, 0).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }

    @Test
    void outcome_withTheElectionNodeAndTheArmedRecordGone_orItsOutcomeZnodeGone_isNotRecorded() throws Exception {
        Armed a = armAs("a");
        String scope0 = Layout.scope(keyPath, 0);
        // the outcome znode alone removed (the election node still there)
        client.delete().forPath(Layout.outcome(scope0));
        assertThat(protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.NOT_SENT, "a"), a.secret()))
                .isEqualTo(ExecutorWrites.OutcomeWrite.ARMED_RECORD_GONE);
        // and the armed record removed with the election node
        client.delete().forPath(Layout.armed(scope0));
        client.delete().forPath(a.node());
        assertThat(protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.NOT_SENT, "a"), a.secret()))
                .isEqualTo(ExecutorWrites.OutcomeWrite.ARMED_RECORD_GONE);
        assertThat(client.checkExists().forPath(Layout.scope(keyPath, 1))).isNull();
    }

    @Test
    void outcome_sentAgainAfterALostReply_recognisesItsOwnSecret_andAForgedOneIsAnotherOutcome() throws Exception {
        Armed a = armAs("a");
        assertThat(protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.NOT_SENT, "a"), a.secret()))
                .isEqualTo(ExecutorWrites.OutcomeWrite.RECORDED);

        // When the same write is sent again, and one with another secret
        ExecutorWrites.OutcomeWrite retried = protocol.executor().recordOutcome(keyPath, 0, a.node(),
                outcome(Outcome.NOT_SENT, "a"), a.secret());
        ExecutorWrites.OutcomeWrite forged = protocol.executor().recordOutcome(keyPath, 0, a.node(),
                outcome(Outcome.NOT_SENT, "a"), Records.newSecret());

        // Then the retry is ours, the other is not, and the not_sent opened scope 1, the scope after it
        assertThat(retried).isEqualTo(ExecutorWrites.OutcomeWrite.RECORDED);
        assertThat(forged).isEqualTo(ExecutorWrites.OutcomeWrite.ANOTHER_OUTCOME);
        assertThat(client.getChildren().forPath(keyPath)).containsExactlyInAnyOrder("authorizations", "0", "1");
    }

    @Test
    void authorizedOpening_openedOnce_thenAlreadyOpen_andFromAStaleReadChanged() throws Exception {
        armAs("a");
        client.create().forPath(Layout.authorization(keyPath, 0), "{\"by\":\"ops\",\"reason\":\"lost\"}"
                .getBytes(StandardCharsets.UTF_8));
        ScopeReads.ScopeRead first = protocol.reads().readScopeOnce(keyPath, 0);

        assertThat(protocol.executor().openAuthorizedScope(keyPath, first.view(), first.authorization()))
                .isEqualTo(ExecutorWrites.Opening.OPENED);
        ScopeReads.ScopeRead again = protocol.reads().readScopeOnce(keyPath, 0);
        assertThat(protocol.executor().openAuthorizedScope(keyPath, again.view(), again.authorization()))
                .isEqualTo(ExecutorWrites.Opening.ALREADY_OPEN);
        assertThat(protocol.executor().openAuthorizedScope(keyPath, first.view(), first.authorization()))
                .as("scope 0 moved since the first read").isEqualTo(ExecutorWrites.Opening.CHANGED);
    }

    @Test
    void authorization_createdAgainByItsOwnAttempt_isItsOwn_anotherOperatorsOrAZkCliRecordIsReturnedAsExisting()
            throws Exception {
        Records.Authorization alice = new Records.Authorization("alice", "lost", Instant.now(), actor("0123456789abcdef"));
        OperatorWrites.Authorizing first = protocol.operator().authorize(keyPath, 0, alice);
        OperatorWrites.Authorizing retried = protocol.operator().authorize(keyPath, 0, alice);
        OperatorWrites.Authorizing bob = protocol.operator().authorize(keyPath, 0,
                new Records.Authorization("bob", "again", Instant.now(), actor("fedcba9876543210")));
        client.create().forPath(Layout.authorization(keyPath, 1), "{\"by\":\"carol\",\"reason\":\"zkCli\"}"
                .getBytes(StandardCharsets.UTF_8));
        OperatorWrites.Authorizing overZkCli = protocol.operator().authorize(keyPath, 1, alice);

        assertThat(first.created()).isTrue();
        assertThat(first.path()).isEqualTo(Layout.authorization(keyPath, 0));
        assertThat(retried.created()).isTrue();
        assertThat(retried.existing()).isNull();
        assertThat(bob.created()).isFalse();
        assertThat(bob.existing().record().by()).isEqualTo("alice");
        assertThat(overZkCli.created()).isFalse();
        assertThat(overZkCli.existing().record().by()).isEqualTo("carol");
    }

    @Test
    void keyRemoval_removesTheWholeKeyAsRead_andNothingWhenItsLatestScopeMoved() throws Exception {
        Armed a = armAs("a");
        protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.SENT_VERIFIED, "a"), a.secret());
        client.delete().forPath(a.node());
        String scope0 = Layout.scope(keyPath, 0);
        int version = client.checkExists().forPath(scope0).getVersion();
        List<String> paths = childrenFirst(keyPath);

        assertThat(protocol.operator().deleteKey(scope0, version + 1, paths)).isFalse();
        assertThat(client.checkExists().forPath(keyPath)).isNotNull();
        assertThat(protocol.operator().deleteKey(scope0, version, paths)).isTrue();
        assertThat(client.checkExists().forPath(keyPath)).isNull();
    }

    private List<String> childrenFirst(String path) throws Exception {
        List<String> out = new ArrayList<>();
        for (String child : client.getChildren().forPath(path)) {
            out.addAll(childrenFirst(path + "/" + child));
        }
        out.add(path);
        return out;
    }
}
