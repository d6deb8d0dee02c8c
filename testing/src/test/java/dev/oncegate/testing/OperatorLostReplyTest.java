package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import java.nio.charset.StandardCharsets;

import dev.oncegate.Attempt;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.Genesis;
import dev.oncegate.OncegateAcl;
import dev.oncegate.Operator;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Admin commands say what they did also when the reply to their write is lost after the server
 * applied it, and the client's retry meets its own write:
 * <ul>
 *   <li>retention: the key is gone (open again, to the next contender), so gc must report it
 *       removed; an admin who reads "kept: it changed while being removed" for a key that is open
 *       again is misled about the one thing retention must be plain about;</li>
 *   <li>{@code oncegate acl}: the genesis names the new roles (a new roles epoch), so it must go on
 *       and give every znode its role ACL, not stop saying that nothing was changed.</li>
 * </ul>
 */
class OperatorLostReplyTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standaloneWithAmbiguousWrites();

    @Test
    void gcWhoseRemovalReplyIsLost_reportsTheKeyRemoved_andItIsGone() throws Exception {
        // Given a delivered key
        Gate gate = zk.newGate("worker");
        EffectKey key = delivered(gate);
        // and the reply to the multi that removes it will be lost (it is applied)
        int dropped = AmbiguousWriteCnxnFactory.dropped();
        AmbiguousWriteCnxnFactory.dropNextMultiDeleting(key.key());

        // When retention removes every consumed key (none is younger than zero)
        List<Operator.GcEntry> entries = new ArrayList<>();
        Operator.GcReport report = gate.operator().gc(Duration.ZERO, false, entries::add);

        // Then the reply was lost, the key is gone, and gc says it removed it
        assertThat(AmbiguousWriteCnxnFactory.dropped()).isEqualTo(dropped + 1);
        assertThat(zk.newClient().checkExists().forPath(key.path(zk.namespace()))).isNull();
        assertThat(entries).filteredOn(e -> e.key().equals(key.key())).singleElement()
                .satisfies(e -> assertThat(e.removed()).as(e.toString()).isTrue());
        assertThat(report.removed()).isGreaterThanOrEqualTo(1);
    }

    @Test
    void aclWhoseGenesisRewriteReplyIsLost_goesOnAndGivesEveryZnodeItsRoleAcl() throws Exception {
        // Given a delivered key in a namespace without access control, and an admin client
        EffectKey key = delivered(zk.newGate("worker"));
        String admin = "admin:a-s3cret";
        Genesis.Roles roles = new Genesis.Roles(OncegateAcl.digest("worker:w-s3cret"), OncegateAcl.digest("ops:o-s3cret"),
                OncegateAcl.digest(admin));
        CuratorFramework client = zk.track(CuratorFrameworkFactory.builder().connectString(zk.connectString())
                .retryPolicy(new RetryNTimes(3, 200)).authorization("digest", admin.getBytes(StandardCharsets.UTF_8))
                .build());
        client.start();
        // and the reply to acl's first write, the genesis naming the new roles, will be lost (it is applied)
        int dropped = AmbiguousWriteCnxnFactory.dropped();
        AmbiguousWriteCnxnFactory.dropNextSetData("/genesis");

        // When the admin turns access control on (`oncegate acl`)
        long changed = Operator.builder(client).namespace(zk.namespace()).build().applyRoles(roles, path -> { });

        // Then the reply was lost, and acl went on: the genesis names the roles and the key's znodes have their
        // role ACL (the admin's entry among them)
        assertThat(AmbiguousWriteCnxnFactory.dropped()).isEqualTo(dropped + 1);
        assertThat(changed).isPositive();
        assertThat(client.getACL().forPath(key.path(zk.namespace()))).as("the key's ACL")
                .anyMatch(acl -> acl.getId().equals(new Id("digest", OncegateAcl.digest(admin))))
                .noneMatch(acl -> acl.getId().getScheme().equals("world"));
        assertThat(new String(client.getData().forPath(zk.namespace() + "/genesis"), StandardCharsets.UTF_8))
                .contains(roles.worker().substring(0, roles.worker().indexOf(':')));
    }

    /** A new key, delivered through {@code gate}. */
    private static EffectKey delivered(Gate gate) throws InterruptedException {
        EffectKey key = zk.newKey();
        try (Attempt attempt = gate.enter(key)) {
            attempt.cross(zk.provider().verified());
        }
        return key;
    }
}
