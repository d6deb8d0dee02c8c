package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.UUID;

import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.Test;

/**
 * What a contender's read of a key ({@link ScopeReads#readKey}) and of one scope tell it, against a
 * real server: the genesis and bucket levels read with the key, the key's creation zxid, its latest
 * scope, a key record that names another effect, and a scope written before schema 4, whose
 * {@code not_sent} is believed only in a namespace without roles.
 */
class KeyReadTest extends ArmedScopeFixture {

    static final Genesis.Roles ROLES = ChainOfCustodyReadTest.ROLES;

    /** A protocol reading as a gate of a namespace whose roles are on. */
    ScopeReads readerWithRoles() {
        return new ScopeProtocol(client, ns, Clock.systemUTC(), z -> { }, () -> Acls.of(ROLES, 0)).reads();
    }

    @Test
    void absentKey_readsTheGenesisAndWhichBucketLevelsExist_andNoScope() throws Exception {
        // Given another effect's key, never created
        EffectKey other = EffectKey.of(Destination.stable("slack", "C2"), UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8));
        String bucket2 = Layout.bucket(ns, other.key());

        // When a contender reads it
        ScopeReads.KeyRead read = protocol.reads().readKey(other);

        // Then it has the genesis, the bucket levels as they are, and no key
        assertThat(read.genesis()).hasValueSatisfying(g -> assertThat(g.id()).isEqualTo(genesisId));
        assertThat(read.firstBucket()).isEqualTo(client.checkExists().forPath(ZKPaths.getPathAndNode(bucket2).getPath()) != null);
        assertThat(read.secondBucket()).isEqualTo(client.checkExists().forPath(bucket2) != null);
        assertThat(read.exists()).isFalse();
        assertThat(read.keyZxid()).isZero();
    }

    @Test
    void existingKey_readsItsBucketsCreationZxidAndOpenScopeZero() throws Exception {
        ScopeReads.KeyRead read = protocol.reads().readKey(key);

        assertThat(read.firstBucket()).isTrue();
        assertThat(read.secondBucket()).isTrue();
        assertThat(read.keyZxid()).isEqualTo(client.checkExists().forPath(keyPath).getCzxid());
        assertThat(read.scope().view().scope()).isZero();
        assertThat(read.scope().view().state()).isEqualTo(ScopeState.OPEN);
        assertThat(read.scope().latchExists()).isTrue();
        assertThat(read.scope().authorization().presence()).isEqualTo(AuthorizationView.Presence.ABSENT);
    }

    @Test
    void keyRecordNamingAnotherEffect_isUnreadable() throws Exception {
        // Given the key znode rewritten with another effect's record
        EffectKey other = EffectKey.of(Destination.stable("slack", "C2"), "other".getBytes(StandardCharsets.UTF_8));
        client.setData().forPath(keyPath, Records.key(other, Instant.now()));

        assertThatThrownBy(() -> protocol.reads().readKey(key)).isInstanceOfSatisfying(UnreadableRecordException.class,
                e -> {
                    assertThat(e.path()).isEqualTo(keyPath);
                    assertThat(e.problem()).contains("names another effect");
                });
    }

    @Test
    void latestScopeAboveZero_isTheScopeTheReadReturns() throws Exception {
        // Given scope 0 proved not_sent, which opened scope 1
        Armed a = armAs("a");
        protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.NOT_SENT, "a"), a.secret());

        ScopeReads.KeyRead read = protocol.reads().readKey(key);

        assertThat(read.scope().view().scope()).isEqualTo(1);
        assertThat(read.scope().view().state()).isEqualTo(ScopeState.OPEN);
        assertThat(read.scope().view().data().opened()).isEqualTo("not_sent:0");
    }

    /** Scope 0 as schema 2 left it: armed by {@link LegacyRecords#ATTEMPT}, with a not_sent beside it (no scope 1). */
    void legacyNotSent() throws Exception {
        String scopePath = Layout.scope(keyPath, 0);
        client.setData().forPath(scopePath, LegacyRecords.armedScope("_c_x-latch-0000000000"));
        client.create().forPath(scopePath + "/" + LegacyRecords.ARMED, LegacyRecords.armed());
        client.create().forPath(Layout.legacyOutcome(scopePath), LegacyRecords.outcome(Outcome.NOT_SENT));
    }

    @Test
    void legacyNotSent_withoutRoles_isBelieved() throws Exception {
        legacyNotSent();

        ScopeReads.KeyRead read = protocol.reads().readKey(key);

        assertThat(read.scope().view().state()).isEqualTo(ScopeState.NOT_SENT);
        assertThat(read.scope().view().armedName()).isEqualTo(LegacyRecords.ARMED);
        assertThat(read.scope().view().armedZxid())
                .isEqualTo(client.checkExists().forPath(Layout.scope(keyPath, 0) + "/" + LegacyRecords.ARMED).getCzxid());
        assertThat(protocol.reads().readScope(keyPath, 0).state()).isEqualTo(ScopeState.NOT_SENT);
    }

    @Test
    void legacyNotSent_inANamespaceWhoseGenesisNamesRoles_isUnreadable() throws Exception {
        // Given the genesis names roles (the reader's ACLs have not caught up yet)
        legacyNotSent();
        String genesisPath = Layout.genesis(ns);
        Genesis open = Records.decodeGenesis(genesisPath, client.getData().forPath(genesisPath));
        client.setData().forPath(genesisPath, Records.genesis(new Genesis(open.id(), open.created(), ROLES)));

        // When a contender reads the key, Then the not_sent cannot be verified: it stops
        assertThatThrownBy(() -> protocol.reads().readKey(key)).isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("cannot be verified in a namespace with roles");
    }

    @Test
    void legacyNotSent_readByAGateWithRoles_isUnreadable_evenBeforeTheGenesisSaysSo() throws Exception {
        // Given a genesis without roles but a reader whose ACLs have roles on
        legacyNotSent();

        // When it reads the key or the scope, Then it stops
        assertThatThrownBy(() -> readerWithRoles().readKey(key)).isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("cannot be verified");
        assertThatThrownBy(() -> readerWithRoles().readScope(keyPath, 0)).isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("cannot be verified");
    }

    @Test
    void watchedRead_ofAnExistingScope_isItsView_andOfAMissingScope_namesTheLatest() throws Exception {
        ScopeReads.ScopeRead read = protocol.reads().readScope(keyPath, 0, event -> { });

        assertThat(read.view().state()).isEqualTo(ScopeState.OPEN);
        assertThat(read.view().version()).isEqualTo(client.checkExists().forPath(Layout.scope(keyPath, 0)).getVersion());
        assertThatThrownBy(() -> protocol.reads().readScope(keyPath, 3, event -> { }))
                .isInstanceOfSatisfying(UnreadableRecordException.class, e -> {
                    assertThat(e.path()).isEqualTo(Layout.scope(keyPath, 3));
                    assertThat(e.problem()).contains("scope 3 is missing (the key's latest scope is 0)");
                });
    }

    @Test
    void readOfAScopeAboveTheLatest_namesTheLatest() throws Exception {
        // Given scopes 0 and 1 (scope 0 proved not_sent)
        Armed a = armAs("a");
        protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(Outcome.NOT_SENT, "a"), a.secret());

        assertThat(protocol.reads().latestScope(keyPath)).isEqualTo(1);
        assertThatThrownBy(() -> protocol.reads().readScopeOnce(keyPath, 3)).isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("scope 3 is missing (the key's latest scope is 1)");
        assertThatThrownBy(() -> protocol.reads().readScope(keyPath, 3, event -> { })).isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("scope 3 is missing (the key's latest scope is 1)");
    }

    @Test
    void readOfAScopeAboveTheLatest_isMissing_andOfAScopeTheChildCountMisses_readsTheLatest() throws Exception {
        assertThatThrownBy(() -> protocol.reads().readScopeOnce(keyPath, 2)).isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("scope 2 is missing (the key's latest scope is 0)");
        // the key's authorizations znode removed: its child count says scope -1; the children say 0
        client.delete().forPath(Layout.authorizations(keyPath));
        assertThat(protocol.reads().readKey(key).scope().view().scope()).isZero();
        assertThat(protocol.reads().latestScope(keyPath)).isZero();
    }
}
