package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.List;

import org.apache.zookeeper.ZooDefs.Ids;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.junit.jupiter.api.Test;

/**
 * A reader checking the chain of custody below a key's latest scope ({@link ScopeReads#verifyChain})
 * against a real server: scope 1 stands only on scope 0's not_sent created with it, or on an
 * authorization {@code after-0} under an {@code authorizations} znode where only operators may
 * create. The records are written as the protocol writes them, then changed by hand where a test
 * says so.
 */
class ChainOfCustodyReadTest extends ArmedScopeFixture {

    static final Genesis.Roles ROLES = new Genesis.Roles(OncegateAcl.digest("worker:w"), OncegateAcl.digest("ops:o"),
            OncegateAcl.digest("admin:a"));

    /** A reader in a namespace whose genesis names {@link #ROLES} (the znodes here keep open ACLs: the client reads all). */
    ScopeReads readerWithRoles() {
        return new ScopeProtocol(client, ns, Clock.systemUTC(), z -> { }, () -> Acls.of(ROLES, 0)).reads();
    }

    /** Scope 0 armed by "a" and ended send_status_unknown; after-0 created by an operator; scope 1 opened from it. */
    ScopeView authorizedScopeOne() throws Exception {
        Armed a = armAs("a");
        assertThat(protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.SEND_STATUS_UNKNOWN, "a"),
                a.secret())).isEqualTo(ExecutorWrites.OutcomeWrite.RECORDED);
        client.create().forPath(Layout.authorization(keyPath, 0), "{\"by\":\"bob\",\"reason\":\"resend\"}"
                .getBytes(StandardCharsets.UTF_8));
        ScopeReads.ScopeRead consumed = protocol.reads().readScopeOnce(keyPath, 0);
        assertThat(protocol.executor().openAuthorizedScope(keyPath, consumed.view(), consumed.authorization()))
                .isEqualTo(ExecutorWrites.Opening.OPENED);
        return protocol.reads().readScope(keyPath, 1);
    }

    @Test
    void authorizedScope_underAnAuthorizationsZnodeAnyoneMayCreateIn_stopsAReaderWithRoles_namingTheAcl() throws Exception {
        // Given scope 1 opened from after-0, whose authorizations znode kept the open ACL (world:anyone, all)
        ScopeView scopeOne = authorizedScopeOne();

        // When a reader in a namespace with roles checks scope 1's chain
        // Then it stops: anyone could have created that authorization
        assertThatThrownBy(() -> readerWithRoles().verifyChain(keyPath, scopeOne))
                .isInstanceOfSatisfying(UnreadableRecordException.class, e -> {
                    assertThat(e.path()).isEqualTo(Layout.scope(keyPath, 1));
                    assertThat(e.problem()).contains("only operators may create (world:anyone may change its ACL");
                });
    }

    @Test
    void authorizedScope_underAnOperatorOnlyAuthorizationsZnode_isAccepted_withOrWithoutRoles() throws Exception {
        // Given the same chain, its authorizations znode giving CREATE to the operator role only
        ScopeView scopeOne = authorizedScopeOne();
        client.setACL().withACL(List.of(new ACL(Perms.CREATE | Perms.READ, new Id("digest", ROLES.operator())),
                new ACL(Perms.READ, Ids.ANYONE_ID_UNSAFE))).forPath(Layout.authorizations(keyPath));

        // When readers with and without roles check it, Then both accept it
        readerWithRoles().verifyChain(keyPath, scopeOne);
        protocol.reads().verifyChain(keyPath, scopeOne);
        assertThat(readerWithRoles().authorizationsWeakness(keyPath)).isNull();
    }

    @Test
    void authorizedScope_withoutRoles_anOpenAuthorizationsZnodeIsNoWeakness() throws Exception {
        // Given the chain with the open ACL, in a namespace without roles (single-team development)
        ScopeView scopeOne = authorizedScopeOne();

        // When it is checked, Then it is accepted: anyone may write anything there anyway
        assertThat(protocol.reads().authorizationsWeakness(keyPath)).isNull();
        protocol.reads().verifyChain(keyPath, scopeOne);
        assertThat(readerWithRoles().authorizationsWeakness(keyPath)).isEqualTo("world:anyone may change its ACL or"
                + " delete what is under it");
    }

    @Test
    void scopeOpenedByNotSent_isAccepted_andAScopeCreatedByHandBesideIt_isNot() throws Exception {
        // Given scope 0 proved not_sent (its outcome's multi created scope 1)
        Armed a = armAs("a");
        protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.NOT_SENT, "a"), a.secret());
        ScopeView scopeOne = protocol.reads().readScope(keyPath, 1);

        // When its chain is checked, Then it stands on the not_sent
        readerWithRoles().verifyChain(keyPath, scopeOne);
        // and a scope 2 created by hand above the open scope 1 stands on nothing
        client.create().forPath(Layout.scope(keyPath, 2), Records.scope(new Records.Scope("not_sent:1", Instant.now(), null,
                false, false)));
        ScopeView scopeTwo = protocol.reads().readScope(keyPath, 2);
        assertThatThrownBy(() -> readerWithRoles().verifyChain(keyPath, scopeTwo))
                .isInstanceOfSatisfying(UnreadableRecordException.class, e -> {
                    assertThat(e.path()).isEqualTo(Layout.scope(keyPath, 2));
                    assertThat(e.problem()).contains("scope 2 was opened neither by a not_sent outcome of scope 1")
                            .doesNotContain("only operators may create");
                });
    }

    @Test
    void scopeCreatedByHandAboveADeliveredScope_stopsTheReadOfTheKey() throws Exception {
        // Given scope 0 delivered (sent_verified), and scope 1 created by hand with the worker credential
        Armed a = armAs("a");
        protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.SENT_VERIFIED, "a"), a.secret());
        client.create().forPath(Layout.scope(keyPath, 1), Records.scope(new Records.Scope("after-0", Instant.now(), null,
                false, false)));

        // When a contender reads the key and checks the chain below its latest scope
        ScopeReads.KeyRead read = protocol.reads().readKey(key);

        // Then it sees scope 1 open, but the chain refuses it: nothing may be delivered there
        assertThat(read.scope().view().scope()).isEqualTo(1);
        assertThat(read.keyZxid()).isEqualTo(client.checkExists().forPath(keyPath).getCzxid());
        assertThatThrownBy(() -> protocol.reads().verifyChain(keyPath, read.scope().view()))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("created by hand");
    }

    @Test
    void scopeMissingBelowTheLatest_isUnreadable_neverSkipped() throws Exception {
        // Given scope 0 not_sent → scope 1 not_sent → scope 2, and scope 1 removed by hand (a partial clean-up)
        Armed a = armAs("a");
        protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.NOT_SENT, "a"), a.secret());
        client.create().forPath(Layout.scope(keyPath, 2), Records.scope(new Records.Scope("not_sent:1", Instant.now(),
                null, false, false)));
        ScopeView scopeTwo = protocol.reads().readScope(keyPath, 2);
        client.delete().deletingChildrenIfNeeded().forPath(Layout.scope(keyPath, 1));

        // When the chain below scope 2 is checked, Then it names the missing scope
        assertThatThrownBy(() -> protocol.reads().verifyChain(keyPath, scopeTwo))
                .isInstanceOfSatisfying(UnreadableRecordException.class, e -> {
                    assertThat(e.path()).isEqualTo(Layout.scope(keyPath, 1));
                    assertThat(e.problem()).contains("scope 1 is missing below scope 2");
                });
    }

    @Test
    void twoNotSentsInARow_theChainBelowScopeTwoIsCheckedLinkByLink_andAccepted() throws Exception {
        // Given scope 0 and scope 1 each proved not_sent (each outcome's multi opened the next scope)
        Armed a = armAs(0, "a");
        protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.NOT_SENT, "a"), a.secret());
        Armed b = armAs(1, "b");
        protocol.executor().recordOutcome(keyPath, 1, b.node(), outcome(Outcome.NOT_SENT, "b"), b.secret());

        // When a contender reads the key and checks the chain below scope 2
        ScopeReads.KeyRead read = readerWithRoles().readKey(key);

        // Then it is at scope 2, open, and each link stands on its not_sent
        assertThat(read.scope().view().scope()).isEqualTo(2);
        assertThat(read.scope().view().state()).isEqualTo(ScopeState.OPEN);
        readerWithRoles().verifyChain(keyPath, read.scope().view());
    }
}
