package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Clock;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The key's creation {@code multi} against a real server, when what the contender read about the
 * bucket levels is out of date by the time it writes: a racing contender made them, or an admin
 * removed them. Either way the key is created whole (key, authorizations, scope 0 at version 0,
 * its election container) or not at all, and an existing key is never written again. And when
 * the genesis named other roles since the gate last read it (a new roles epoch), the key is
 * created with the ACLs of the roles the genesis names now, never with the gate's stale ones.
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

        assertThat(protocol.executor().createKey(key, genesisId, false, false)).isEqualTo(ExecutorWrites.KeyCreation.CREATED);

        assertCreatedWhole();
    }

    @Test
    void secondLevelMadeSinceTheRead_keyIsCreatedWhole() throws Exception {
        client.create().creatingParentsIfNeeded().forPath(bucket2); // our read saw only the first level

        assertThat(protocol.executor().createKey(key, genesisId, true, false)).isEqualTo(ExecutorWrites.KeyCreation.CREATED);

        assertCreatedWhole();
    }

    @Test
    void bucketsRemovedSinceTheRead_areCreatedAgain_withTheKey() throws Exception {
        // Our read saw both levels; an admin removed them before the create
        assertThat(client.checkExists().forPath(bucket1)).isNull();

        assertThat(protocol.executor().createKey(key, genesisId, true, true)).isEqualTo(ExecutorWrites.KeyCreation.CREATED);

        assertCreatedWhole();
    }

    @Test
    void onlySecondLevelRemovedSinceTheRead_keyIsCreatedWhole() throws Exception {
        client.create().creatingParentsIfNeeded().forPath(bucket1);

        assertThat(protocol.executor().createKey(key, genesisId, true, true)).isEqualTo(ExecutorWrites.KeyCreation.CREATED);

        assertCreatedWhole();
    }

    @Test
    void keyCreatedByAnother_isReportedExists_andNotWrittenAgain() throws Exception {
        assertThat(protocol.executor().createKey(key, genesisId, false, false)).isEqualTo(ExecutorWrites.KeyCreation.CREATED);
        Stat keyBefore = client.checkExists().forPath(keyPath);
        Stat scopeBefore = client.checkExists().forPath(Layout.scope(keyPath, 0));

        // A second contender whose read was as old as the first one's
        assertThat(protocol.executor().createKey(key, genesisId, false, false)).isEqualTo(ExecutorWrites.KeyCreation.EXISTS);

        assertThat(client.checkExists().forPath(keyPath).getMzxid()).isEqualTo(keyBefore.getMzxid());
        assertThat(client.checkExists().forPath(Layout.scope(keyPath, 0)).getMzxid()).isEqualTo(scopeBefore.getMzxid());
        assertThat(client.getChildren().forPath(keyPath)).containsExactlyInAnyOrder("authorizations", "0");
    }

    @Test
    void namespaceReplacedSinceTheRead_createsNothing() throws Exception {
        client.delete().forPath(Layout.genesisMarker(ns, genesisId));

        assertThatThrownBy(() -> protocol.executor().createKey(key, genesisId, false, false))
                .isInstanceOfSatisfying(StopException.class,
                        e -> assertThat(e.stop().reason()).isEqualTo(StopReason.NAMESPACE_REPLACED));

        assertThat(client.checkExists().forPath(bucket1)).isNull();
    }

    @Test
    void rolesTurnedOnSinceTheGateReadTheGenesis_creationFailsItsEpochCheck_andIsSentAgainWithTheRoleAcls()
            throws Exception {
        // Given a gate (on a worker's client) that read the genesis while it named no roles
        Genesis.Roles roles = new Genesis.Roles(OncegateAcl.digest("worker:w"), OncegateAcl.digest("ops:o"),
                OncegateAcl.digest("admin:a"));
        try (CuratorFramework worker = authenticated("worker:w"); CuratorFramework admin = authenticated("admin:a")) {
            NamespaceState gate = new NamespaceState(worker, ns, Clock.systemUTC(), ZxidMarks.inMemory(), false);
            assertThat(gate.checkGenesis()).isNull();
            String genesisPath = Layout.genesis(ns);
            Genesis before = Records.decodeGenesis(genesisPath, client.getData().forPath(genesisPath));
            // When the admin names the roles in the genesis (what `oncegate acl` does first), unknown to the gate
            client.setData().forPath(genesisPath, Records.genesis(new Genesis(before.id(), before.created(), roles)));

            // Then the gate's creation, sent with the ACLs it knew, fails its epoch check and is sent again with the new ones
            assertThat(gate.protocol.executor().createKey(key, genesisId, false, false)).isEqualTo(ExecutorWrites.KeyCreation.CREATED);

            Acls now = Acls.of(roles);
            for (String path : new String[] {bucket1, bucket2, keyPath, Layout.authorizations(keyPath),
                    Layout.scope(keyPath, 0), Layout.latch(Layout.scope(keyPath, 0))}) {
                assertThat(admin.getACL().forPath(path)).as(path).isEqualTo(now.forPath(ns, path));
            }
        }
    }

    private static CuratorFramework authenticated(String userColonPassword) {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(zk.server().getConnectString())
                .retryPolicy(new RetryOneTime(100))
                .authorization("digest", userColonPassword.getBytes(StandardCharsets.UTF_8)).build();
        c.start();
        return c;
    }

    private void assertCreatedWhole() throws Exception {
        assertThat(client.getChildren().forPath(bucket2)).containsExactly(key.key());
        assertThat(client.getChildren().forPath(keyPath)).containsExactlyInAnyOrder("authorizations", "0");
        assertThat(client.checkExists().forPath(Layout.scope(keyPath, 0)).getVersion()).isZero();
        assertThat(client.checkExists().forPath(Layout.latch(Layout.scope(keyPath, 0)))).isNotNull();
        assertThat(protocol.reads().readKey(key).exists()).isTrue();
    }
}
