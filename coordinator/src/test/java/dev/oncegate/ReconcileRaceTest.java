package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import org.junit.jupiter.api.Test;

/**
 * An operator's reconciliation never races an executor or an authorization: ZooKeeper decides,
 * and exactly one of the two lands (issue 15, item 1). Each test puts the other write between
 * the operator's read and its multi, the window the operator command cannot close by itself.
 */
class ReconcileRaceTest extends ArmedScopeFixture {

    KeyHistory.Reconciliation reconciliation() {
        return new KeyHistory.Reconciliation(Outcome.SENT_VERIFIED, "alice", "the file is in the channel",
                actor("operator"), Instant.now());
    }

    Operator operator() {
        return Operator.builder(client).namespace(ns).build();
    }

    /** Scope 0 armed by executor "a", which recorded send_status_unknown. */
    void consumedUnknown() throws Exception {
        Armed a = armAs("a");
        protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.SEND_STATUS_UNKNOWN, "a"), a.secret());
    }

    @Test
    void notSentLandsAfterTheOperatorRead_theReconciliationIsRefused_andTheKeyStaysOpenInScopeOne() throws Exception {
        // Given A armed scope 0 and an operator read it as armed without outcome
        Armed a = armAs("a");
        ScopeView read = protocol.reads().readScope(keyPath, 0);
        assertThat(read.state()).isEqualTo(ScopeState.ARMED);
        // When A proves not_sent (which opens scope 1), and then the operator's reconciliation is sent
        assertThat(protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.NOT_SENT, "a"), a.secret()))
                .isEqualTo(ExecutorWrites.OutcomeWrite.RECORDED);
        boolean reconciled = protocol.operator().reconcile(read, reconciliation());

        // Then the reconciliation did not land: scope 0 reads not_sent, scope 1 is open, no record says otherwise
        assertThat(reconciled).isFalse();
        assertThat(protocol.reads().readScope(keyPath, 0).state()).isEqualTo(ScopeState.NOT_SENT);
        assertThat(protocol.reads().readScope(keyPath, 1).state()).isEqualTo(ScopeState.OPEN);
        assertThat(client.checkExists().forPath(Layout.reconciliation(keyPath, 0))).isNull();
        // and the operator command, reading again, refuses: the key is no longer consumed
        assertThatThrownBy(() -> operator().reconcile(key.key(), "alice", "seen"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not consumed");
    }

    @Test
    void reconciliationLandsFirst_theExecutorsLateNotSentIsNotRecorded_andNothingReopens() throws Exception {
        // Given A armed scope 0, and an operator reconciled it as delivered
        Armed a = armAs("a");
        assertThat(protocol.operator().reconcile(protocol.reads().readScope(keyPath, 0), reconciliation())).isTrue();

        // When A's not_sent comes late
        ExecutorWrites.OutcomeWrite late = protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.NOT_SENT, "a"),
                a.secret());

        // Then it is not written and scope 1 never opens: the reconciliation took the outcome's one write
        assertThat(late).isEqualTo(ExecutorWrites.OutcomeWrite.ANOTHER_OUTCOME);
        assertThat(client.checkExists().forPath(Layout.scope(keyPath, 1))).isNull();
        assertThat(protocol.reads().readScope(keyPath, 0).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }

    @Test
    void authorizationOpensTheNextScopeAfterTheOperatorRead_theReconciliationIsRefused() throws Exception {
        // Given scope 0 ended send_status_unknown, an operator authorized a redelivery, and another read it
        consumedUnknown();
        client.create().forPath(Layout.authorization(keyPath, 0), "{\"by\":\"bob\",\"reason\":\"resend\"}"
                .getBytes(StandardCharsets.UTF_8));
        ScopeReads.ScopeRead read = protocol.reads().readScopeOnce(keyPath, 0);
        assertThat(read.view().state()).isEqualTo(ScopeState.SEND_STATUS_UNKNOWN);
        // When a contender opens scope 1 with the authorization, and then the reconciliation of scope 0 is sent
        assertThat(protocol.executor().openAuthorizedScope(keyPath, read.view(), read.authorization()))
                .isEqualTo(ExecutorWrites.Opening.OPENED);
        boolean reconciled = protocol.operator().reconcile(read.view(), reconciliation());

        // Then it does not land on a scope that is no longer the latest
        assertThat(reconciled).isFalse();
        assertThat(client.checkExists().forPath(Layout.reconciliation(keyPath, 0))).isNull();
        assertThat(protocol.reads().readScope(keyPath, 1).state()).isEqualTo(ScopeState.OPEN);
    }

    @Test
    void reconciliationOfAnUnknownScope_landsBesideTheOriginalOutcome() throws Exception {
        consumedUnknown();

        Operator.Reconciled done = operator().reconcile(key.key(), "alice", "message 42 is there");

        assertThat(done.created()).isTrue();
        ScopeView scope = protocol.reads().readScope(keyPath, 0);
        assertThat(scope.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(scope.outcome().outcome()).as("the executor's record stays").isEqualTo(Outcome.SEND_STATUS_UNKNOWN);
    }
}
