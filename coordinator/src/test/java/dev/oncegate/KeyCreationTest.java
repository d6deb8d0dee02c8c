package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;


import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The key's creation {@code multi} against a real server, when what the contender read about the
 * bucket levels is out of date by the time it writes: a racing contender made them, or an admin
 * removed them. Either way the key is created whole (key, authorizations, scope 0 at version 0,
 * its election container) or not at all, and an existing key is never written again.
 */
class KeyCreationTest extends OneNamespacePerTest {

    String bucket2;
    String bucket1;

    @BeforeEach
    void buckets() {
        bucket2 = Layout.bucket(ns, key.key());
        bucket1 = ZKPaths.getPathAndNode(bucket2).getPath();
    }

    @Test
    void bucketsMadeByARacingContender_sinceTheRead_keyIsCreatedWhole() throws Exception {
        client.create().creatingParentsIfNeeded().forPath(bucket2); // after our read saw no bucket

        assertThat(protocol.createKey(key, genesisId, false, false)).isEqualTo(ScopeProtocol.KeyCreation.CREATED);

        assertCreatedWhole();
    }

    @Test
    void secondLevelMadeSinceTheRead_keyIsCreatedWhole() throws Exception {
        client.create().creatingParentsIfNeeded().forPath(bucket2); // our read saw only the first level

        assertThat(protocol.createKey(key, genesisId, true, false)).isEqualTo(ScopeProtocol.KeyCreation.CREATED);

        assertCreatedWhole();
    }

    @Test
    void bucketsRemovedSinceTheRead_areCreatedAgain_withTheKey() throws Exception {
        // Our read saw both levels; an admin removed them before the create
        assertThat(client.checkExists().forPath(bucket1)).isNull();

        assertThat(protocol.createKey(key, genesisId, true, true)).isEqualTo(ScopeProtocol.KeyCreation.CREATED);

        assertCreatedWhole();
    }

    @Test
    void onlySecondLevelRemovedSinceTheRead_keyIsCreatedWhole() throws Exception {
        client.create().creatingParentsIfNeeded().forPath(bucket1);

        assertThat(protocol.createKey(key, genesisId, true, true)).isEqualTo(ScopeProtocol.KeyCreation.CREATED);

        assertCreatedWhole();
    }

    @Test
    void keyCreatedByAnother_isReportedExists_andNotWrittenAgain() throws Exception {
        assertThat(protocol.createKey(key, genesisId, false, false)).isEqualTo(ScopeProtocol.KeyCreation.CREATED);
        Stat keyBefore = client.checkExists().forPath(keyPath);
        Stat scopeBefore = client.checkExists().forPath(Layout.scope(keyPath, 0));

        // A second contender whose read was as old as the first one's
        assertThat(protocol.createKey(key, genesisId, false, false)).isEqualTo(ScopeProtocol.KeyCreation.EXISTS);

        assertThat(client.checkExists().forPath(keyPath).getMzxid()).isEqualTo(keyBefore.getMzxid());
        assertThat(client.checkExists().forPath(Layout.scope(keyPath, 0)).getMzxid()).isEqualTo(scopeBefore.getMzxid());
        assertThat(client.getChildren().forPath(keyPath)).containsExactlyInAnyOrder("authorizations", "0");
    }

    @Test
    void namespaceReplacedSinceTheRead_createsNothing() throws Exception {
        client.delete().forPath(Layout.genesisMarker(ns, genesisId));

        assertThatThrownBy(() -> protocol.createKey(key, genesisId, false, false))
                .isInstanceOfSatisfying(StopException.class,
                        e -> assertThat(e.stop().reason()).isEqualTo(StopReason.NAMESPACE_REPLACED));

        assertThat(client.checkExists().forPath(bucket1)).isNull();
    }

    private void assertCreatedWhole() throws Exception {
        assertThat(client.getChildren().forPath(bucket2)).containsExactly(key.key());
        assertThat(client.getChildren().forPath(keyPath)).containsExactlyInAnyOrder("authorizations", "0");
        assertThat(client.checkExists().forPath(Layout.scope(keyPath, 0)).getVersion()).isZero();
        assertThat(client.checkExists().forPath(Layout.latch(Layout.scope(keyPath, 0)))).isNotNull();
        assertThat(protocol.readKey(key).exists()).isTrue();
    }
}
