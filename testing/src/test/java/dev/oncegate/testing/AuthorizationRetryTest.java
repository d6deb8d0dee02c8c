package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import dev.oncegate.Operator;
import dev.oncegate.ScopeState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One authorize writes at most one authorization, also when the create's reply is lost and
 * Curator retries it: the retry meets NodeExists and recognises its own attempt id.
 */
class AuthorizationRetryTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standaloneWithAmbiguousWrites();

    @Test
    void authorizeWhoseReplyIsLost_recognisesItsOwnRecord_andOneRedeliveryFollows() throws Exception {
        Gate ops = zk.newGate("ops");
        try (Attempt attempt = ops.enter(zk.key())) {
            attempt.cross(zk.provider().unconfirmed());
        }
        // Given the reply to the authorization's create will be lost (it is applied)
        int dropped = AmbiguousWriteCnxnFactory.dropped();
        AmbiguousWriteCnxnFactory.dropNextMultiCreating("/authorizations/after-0"); // with its backlog index entry

        // When an operator authorizes once
        Operator.Authorized done = ops.operator().authorize(zk.key().key(), 0, "alice", "customer says nothing arrived");

        // Then the retried create recognised its own record: created, one record, one redelivery
        assertThat(AmbiguousWriteCnxnFactory.dropped()).isEqualTo(dropped + 1);
        assertThat(done.created()).isTrue();
        assertThat(done.status()).isEqualTo(KeyHistory.AuthorizationStatus.UNUSED);
        assertThat(zk.newClient().getChildren().forPath(zk.keyPath() + "/authorizations")).containsExactly("after-0");
        int proceeded = 0;
        for (int i = 0; i < 3; i++) {
            try (Attempt attempt = zk.newGate("retry-" + i).enter(zk.key())) {
                if (attempt.decision() instanceof Decision.Proceed) {
                    proceeded++;
                    attempt.cross(zk.provider().verified());
                }
            }
        }
        assertThat(proceeded).isEqualTo(1);
        assertThat(zk.provider().deliveries()).isEqualTo(2);
    }

    /** The same for a reconciliation: its multi's reply lost, the next round finds the operator's own record. */
    @Test
    void reconcileWhoseReplyIsLost_reportsItsOwnReconciliationAsCreated() throws Exception {
        Gate ops = zk.newGate("ops");
        EffectKey key = zk.newKey();
        try (Attempt attempt = ops.enter(key)) {
            attempt.cross(zk.provider().unconfirmed());
        }
        // Given the reply to the reconciliation's multi will be lost (it is applied)
        int dropped = AmbiguousWriteCnxnFactory.dropped();
        AmbiguousWriteCnxnFactory.dropNextMultiCreating("/authorizations/reconciled-0");

        // When an operator reconciles once
        Operator.Reconciled done = ops.operator().reconcile(key.key(), "alice", "message 42 is in the inbox");

        // Then it says it created the reconciliation, which is its own, and the key reads sent_verified
        assertThat(AmbiguousWriteCnxnFactory.dropped()).isEqualTo(dropped + 1);
        assertThat(done.created()).isTrue();
        assertThat(done.reconciliation().by()).isEqualTo("alice");
        assertThat(ops.operator().inspect(key.key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
