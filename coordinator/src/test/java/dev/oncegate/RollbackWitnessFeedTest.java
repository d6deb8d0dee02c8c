package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every zxid a read or write reveals goes to the rollback witness ({@link ScopeProtocol#saw}):
 * a read or write that kept its zxid to itself would let an ensemble restored from an older
 * snapshot go unseen. Each test does one protocol step against a real server and checks that the
 * witness was told the zxid of the znode it read or wrote (as the witness takes it: the highest of
 * its creation, last write and last child change).
 */
class RollbackWitnessFeedTest extends ArmedScopeFixture {

    final List<Long> told = new CopyOnWriteArrayList<>();
    ScopeProtocol witnessed;

    @BeforeEach
    void witnessedProtocol() {
        witnessed = new ScopeProtocol(client, ns, Clock.systemUTC(), told::add, () -> Acls.OPEN);
    }

    long zxidOf(String path) throws Exception {
        Stat s = client.checkExists().forPath(path);
        return Math.max(s.getMzxid(), Math.max(s.getPzxid(), s.getCzxid()));
    }

    @Test
    void keyRead_tellsTheGenesisKeyAndScopeZxids() throws Exception {
        // Given the key znode last written after everything else (so its zxid is its own)
        client.setData().forPath(keyPath, client.getData().forPath(keyPath));

        witnessed.reads().readKey(key);

        assertThat(told).contains(zxidOf(Layout.genesis(ns)), zxidOf(keyPath), zxidOf(Layout.scope(keyPath, 0)));
    }

    @Test
    void scopeAuthorizationAndKeyReads_tellTheirZnodesZxids() throws Exception {
        Armed a = armAs("a");
        protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.SEND_STATUS_UNKNOWN, "a"), a.secret());
        client.create().forPath(Layout.authorization(keyPath, 0), "{\"by\":\"ops\",\"reason\":\"lost\"}"
                .getBytes(StandardCharsets.UTF_8));
        String scope0 = Layout.scope(keyPath, 0);

        witnessed.reads().readScope(keyPath, 0);
        assertThat(told).contains(zxidOf(scope0), zxidOf(Layout.armed(scope0)), zxidOf(Layout.outcome(scope0)),
                zxidOf(Layout.authorization(keyPath, 0)));
        told.clear();
        witnessed.reads().readAuthorization(keyPath, 0);
        assertThat(told).containsExactly(zxidOf(Layout.authorization(keyPath, 0)));
        told.clear();
        assertThat(witnessed.reads().keyZxid(keyPath)).isEqualTo(client.checkExists().forPath(keyPath).getCzxid());
        assertThat(told).containsExactly(zxidOf(keyPath));
    }

    @Test
    void legacyArmedRecordFetched_tellsItsZxid() throws Exception {
        String scope0 = Layout.scope(keyPath, 0);
        client.setData().forPath(scope0, LegacyRecords.armedScope("_c_x-latch-0000000000"));
        client.create().forPath(scope0 + "/" + LegacyRecords.ARMED, LegacyRecords.armed());
        client.create().forPath(Layout.legacyOutcome(scope0), LegacyRecords.outcome(Outcome.NOT_SENT));

        witnessed.reads().readScope(keyPath, 0);

        assertThat(told).contains(zxidOf(scope0 + "/" + LegacyRecords.ARMED));
    }

    @Test
    void leaseArmingAndOutcomeWrites_tellTheZxidTheyLandedAt() throws Exception {
        String node = electionNode(0);
        String scope0 = Layout.scope(keyPath, 0);
        Records.Scope leased = lease("a", node);
        ExecutorWrites.LeaseWrite write = witnessed.executor().writeLease(scope0, 0, leased, node);
        assertThat(told).contains(write.token().zxid());
        told.clear();
        // a retried lease write, recognised as ours from a read, tells the zxid of that read
        witnessed.executor().writeLease(scope0, 0, leased, node);
        assertThat(told).contains(zxidOf(scope0));
        told.clear();

        String secret = Records.newSecret();
        ExecutorWrites.Arming arming = witnessed.executor().arm(scope0, write.token(), node, genesisId, leased.armedNow(),
                armedRecord("a", write.token()), secret, java.time.Duration.ofSeconds(10));
        assertThat(told).containsExactly(arming.zxid());
        told.clear();

        witnessed.executor().recordOutcome(keyPath, 0, node, outcome(Outcome.SEND_STATUS_UNKNOWN, "a"), secret);
        assertThat(told).containsExactly(client.checkExists().forPath(Layout.outcome(scope0)).getMzxid());
    }

    @Test
    void authorizationOpeningAndReconciliationWrites_tellTheZxidTheyLandedAt() throws Exception {
        // Given scope 0 armed without outcome (so the reconciliation writes the outcome znode, whose stat it gets back)
        armAs("a");

        witnessed.operator().authorize(keyPath, 0, new Records.Authorization("alice", "lost", Instant.now(), actor("ops")));
        assertThat(told).containsExactly(zxidOf(Layout.authorization(keyPath, 0)));
        told.clear();

        ScopeReads.ScopeRead consumed = protocol.reads().readScopeOnce(keyPath, 0);
        witnessed.operator().reconcile(consumed.view(), new KeyHistory.Reconciliation(Outcome.SENT_VERIFIED, "alice",
                "seen", actor("ops"), Instant.now()));
        assertThat(told).containsExactly(client.checkExists().forPath(Layout.outcome(Layout.scope(keyPath, 0))).getMzxid());
        told.clear();

        ScopeReads.ScopeRead reconciled = protocol.reads().readScopeOnce(keyPath, 0);
        witnessed.executor().openAuthorizedScope(keyPath, reconciled.view(), reconciled.authorization());
        assertThat(told).containsExactly(client.checkExists().forPath(Layout.scope(keyPath, 0)).getMzxid());
    }

    @Test
    void reconcilingAnUnknownOutcome_tellsTheZxidOfItsRecord() throws Exception {
        // Given scope 0 ended send_status_unknown (the reconciliation's multi then has only checks and a create,
        // whose results carry no stat)
        Armed armed = armAs("a");
        protocol.executor().recordOutcome(keyPath, 0, armed.node(), outcome(Outcome.SEND_STATUS_UNKNOWN, "a"),
                armed.secret());
        told.clear();

        // When an operator reconciles it as delivered
        ScopeReads.ScopeRead unknown = protocol.reads().readScopeOnce(keyPath, 0);
        boolean landed = witnessed.operator().reconcile(unknown.view(), new KeyHistory.Reconciliation(
                Outcome.SENT_VERIFIED, "alice", "seen", actor("ops"), Instant.now()));

        // Then the rollback witness hears the zxid the reconciliation landed at
        assertThat(landed).isTrue();
        assertThat(told).containsExactly(zxidOf(Layout.reconciliation(keyPath, 0)));
    }
}
