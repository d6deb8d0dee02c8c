package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import dev.oncegate.ActionResult;
import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import dev.oncegate.StopReason;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A write never lands in a recreated znode. ZooKeeper compares versions only and a recreated
 * znode starts again at version 0, so an executor's old token can match a new scope: every
 * executor write is bound to the incarnation it was issued for (its election node, the genesis
 * id, its own armed record), and these interleavings end with honest records and no delivery
 * that the records do not account for.
 */
class RecreatedZnodeTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    /** An operator's {@code deleteall KEY}. */
    void deleteKey() throws Exception {
        zk.newClient().delete().deletingChildrenIfNeeded().forPath(zk.keyPath());
    }

    @Test
    void namespaceWipedAndReinitialised_theOldExecutorCannotArmTheNewScope() throws Exception {
        // Given A proceeded in the namespace with token 1 (leased scope 0)
        Worker a = zk.newWorker("task-a");
        Attempt attemptA = a.gate().enter(zk.key());
        assertThat(attemptA.decision()).isInstanceOfSatisfying(Decision.Proceed.class,
                p -> assertThat(p.token().version()).isEqualTo(1));
        // When the namespace is deleted and initialised again, and B proceeds in the new one (token 1 too)
        CuratorFramework admin = zk.newClient();
        admin.delete().deletingChildrenIfNeeded().forPath(zk.namespace());
        Gate.initialize(admin, zk.namespace());
        Worker b = zk.newWorker("task-b");
        Attempt attemptB = b.gate().enter(zk.key());
        assertThat(attemptB.decision()).isInstanceOfSatisfying(Decision.Proceed.class,
                p -> assertThat(p.token().version()).isEqualTo(1));

        // Then A's crossing is refused and B delivers
        Crossing crossA = attemptA.cross(zk.provider().verified());
        Crossing crossB = attemptB.cross(zk.provider().verified());
        attemptA.close();
        attemptB.close();
        assertThat(crossA).isInstanceOfSatisfying(Crossing.Refused.class,
                r -> assertThat(r.stop().reason()).isEqualTo(StopReason.NAMESPACE_REPLACED));
        assertThat(crossB).isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.recorded()).isTrue());
        assertThat(zk.provider().ledger()).singleElement().satisfies(d -> assertThat(d.taskId()).isEqualTo("task-b"));
        KeyHistory history = b.gate().inspect(zk.key().key());
        assertThat(history.scopes()).singleElement().satisfies(s -> {
            assertThat(s.state()).isEqualTo(ScopeState.SENT_VERIFIED);
            assertThat(s.outcome().by().task()).isEqualTo("task-b");
        });
    }

    /** A's crossing and B's, and B's gate. */
    record Interleaving(Crossing a, Crossing b, Gate gateB) {
    }

    /**
     * A (whose action then runs {@code then}) is inside its action when an operator deletes the
     * key ({@code deleteall}); B arms the recreated scope 0 and is delivering; A finishes first, then B.
     */
    Interleaving keyDeletedWhileAActs_thenAFinishesBeforeB(BoundaryAction then) throws Exception {
        try (CrossingInFlight a = CrossingInFlight.start(zk.newGate("task-a"), zk.key(), then)) {
            assertThat(a.awaitInAction(Timing.EVENTUALLY)).isTrue();
            deleteKey();
            Gate gateB = zk.newGate("task-b");
            try (CrossingInFlight b = CrossingInFlight.start(gateB, zk.key(), zk.provider().verified())) {
                assertThat(b.awaitInAction(Timing.EVENTUALLY)).isTrue();
                Crossing a0 = a.releaseAndAwait(Timing.EVENTUALLY);
                return new Interleaving(a0, b.releaseAndAwait(Timing.EVENTUALLY), gateB);
            }
        }
    }

    @Test
    void keyDeletedWhileItsExecutorActs_itsNotSentNeverLandsInTheRecreatedScope() throws Exception {
        // Given A armed scope 0 and is inside an action that will prove not_sent
        // When an operator deletes the key (`deleteall`), and B arms the recreated scope 0 and is delivering,
        // and A's action proves not_sent before B's completes
        Interleaving run = keyDeletedWhileAActs_thenAFinishesBeforeB(zk.provider().rejects("the provider rejected it"));

        // Then A's not_sent was not recorded (its armed record is gone), B's delivery was
        assertThat(run.a()).isInstanceOfSatisfying(Crossing.Crossed.class, c -> {
            assertThat(c.outcome()).isEqualTo(Outcome.NOT_SENT);
            assertThat(c.recorded()).isFalse();
        });
        assertThat(run.b()).isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.recorded()).isTrue());
        // and a third worker does not deliver again: the records say B delivered in scope 0
        try (Attempt c = zk.newGate("task-c").enter(zk.key(), Timing.WAIT)) {
            assertThat(c.decision()).isInstanceOf(Decision.StopSent.class);
        }
        assertThat(zk.provider().ledger()).singleElement().satisfies(d -> assertThat(d.taskId()).isEqualTo("task-b"));
        KeyHistory history = run.gateB().inspect(zk.key().key());
        assertThat(history.scopes()).singleElement().satisfies(s -> {
            assertThat(s.state()).isEqualTo(ScopeState.SENT_VERIFIED);
            assertThat(s.outcome().by().task()).isEqualTo("task-b");
            assertThat(s.armed().by().task()).isEqualTo("task-b");
        });
    }

    @Test
    void keyDeletedWhileItsExecutorDelivers_itsOutcomeIsNotWrittenIntoTheNewExecutorsScope() throws Exception {
        // Given A armed scope 0 and is delivering
        // When the key is deleted and B arms the recreated scope 0 and is delivering too, and A finishes first
        Interleaving run = keyDeletedWhileAActs_thenAFinishesBeforeB(zk.provider().verified());

        // Then A's outcome was not written into B's scope; B's own outcome stands beside B's armed record.
        // (The deleteall erased A's delivery from the records: that is why it is never the redelivery procedure.)
        assertThat(run.a()).isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.recorded()).isFalse());
        assertThat(run.b()).isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.recorded()).isTrue());
        assertThat(run.gateB().inspect(zk.key().key()).scopes()).singleElement().satisfies(s -> {
            assertThat(s.armed().by().task()).isEqualTo("task-b");
            assertThat(s.outcome().by().task()).isEqualTo("task-b");
        });
        assertThat(zk.provider().ledger()).extracting(RecordingProvider.Delivery::taskId).containsExactly("task-a", "task-b");
    }

    @Test
    void scopeRewrittenWhileTheExecutorActs_itsOutcomeIsStillRecorded_theScopeDataDecidesNothingOnceArmed()
            throws Exception {
        // Given A armed scope 0 and is delivering
        try (CrossingInFlight a = CrossingInFlight.start(zk.newGate("task-a"), zk.key(), ctx -> {
            zk.provider().deliver(ctx);
            return ActionResult.verified("receipt");
        })) {
            assertThat(a.awaitInAction(Timing.EVENTUALLY)).isTrue();
            // When someone rewrites the scope znode (same bytes, new version) while A is inside its action
            CuratorFramework other = zk.newClient();
            String scope0 = zk.keyPath() + "/0";
            other.setData().forPath(scope0, other.getData().forPath(scope0));

            // Then A's outcome is recorded all the same: it is bound to A's armed record, not to the scope's data
            assertThat(a.releaseAndAwait(Timing.EVENTUALLY))
                    .isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.recorded()).isTrue());
            assertThat(other.getData().forPath(scope0 + "/armed/outcome")).isNotEmpty();
        }
        try (Attempt late = zk.newGate("task-b").enter(zk.key())) {
            assertThat(late.decision()).isInstanceOfSatisfying(Decision.StopSent.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.SENT_VERIFIED));
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }
}
