package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import dev.oncegate.ScopeState;
import dev.oncegate.StopReason;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Keys written before schema 3 (records with schema 2's full field names) go on being decided
 * by this version: a consumed one stops every contender, an open one is delivered once, its
 * records then written in schema 4 beside the old ones.
 */
class SchemaUpgradeTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final String ACTOR = "{\"task\":\"old-task\",\"host\":\"old-host\",\"pid\":7,\"session\":\"1\","
            + "\"attempt\":\"0011223344556677\"}";

    @Test
    void keyConsumedUnderSchema2_stopsEveryLaterContender_andDeliversNothing() throws Exception {
        // Given a key delivered and verified by an earlier version, its records in schema 2
        CuratorFramework admin = zk.newClient();
        String scope0 = writeSchema2Key(admin, zk.key(), ",\"holder\":" + holder() + ",\"armed\":true}");
        write(admin, scope0 + "/armed-0011223344556677", "{\"v\":2,\"checkpoints\":[],\"by\":" + ACTOR
                + ",\"token\":1,\"zxid\":5,\"at\":\"2026-11-01T10:00:01Z\"}");
        write(admin, scope0 + "/outcome", "{\"v\":2,\"outcome\":\"sent_verified\",\"detail\":\"receipt-9\",\"by\":" + ACTOR
                + ",\"token\":1,\"zxid\":5,\"at\":\"2026-11-01T10:00:02Z\"}");

        // When a contender of this version enters
        Worker w = zk.newWorker("new-task");
        try (Attempt a = w.gate().enter(zk.key())) {
            // Then it stops sent, resting on the old outcome record
            assertThat(a.decision()).isInstanceOfSatisfying(Decision.StopSent.class, s -> {
                assertThat(s.reason()).isEqualTo(StopReason.SENT_VERIFIED);
                assertThat(s.evidence().path()).isEqualTo(scope0 + "/outcome");
                assertThat(s.evidence().task()).isEqualTo("old-task");
            });
        }
        assertThat(zk.provider().deliveries()).isZero();
        assertThat(w.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }

    @Test
    void openKeyUnderSchema2_isDeliveredOnce_andItsNewRecordsAreSchema4() throws Exception {
        // Given a key an earlier version created and nobody leased
        CuratorFramework admin = zk.newClient();
        String scope0 = writeSchema2Key(admin, zk.key(), ",\"holder\":null}");

        // When two contenders of this version come one after the other
        Worker first = zk.newWorker("new-a");
        Crossing crossing;
        try (Attempt a = first.gate().enter(zk.key())) {
            assertThat(a.decision().proceeds()).as("%s", a.decision()).isTrue();
            crossing = a.cross(zk.provider().verified());
        }
        try (Attempt b = zk.newWorker("new-b").gate().enter(zk.key())) {
            assertThat(b.decision()).isInstanceOf(Decision.StopSent.class);
        }

        // Then one delivery; the scope and its outcome are written in schema 4, the key record stays as it was
        assertThat(crossing).isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.outcome()).isEqualTo(Outcome.SENT_VERIFIED));
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(text(admin, scope0)).startsWith("{\"v\":4,");
        assertThat(text(admin, scope0 + "/armed/outcome")).startsWith("{\"v\":4,\"o\":\"sent_verified\"");
        assertThat(text(admin, zk.keyPath())).startsWith("{\"v\":2,\"provider\":");
        KeyHistory history = first.gate().inspect(zk.key().key());
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(history.unreadable()).isEmpty();
        assertThat(history.record().destination()).isEqualTo(zk.key().destination().id());
    }

    /** The key record, its authorizations and scope 0 as schema 2 wrote them; returns scope 0's path. */
    private static String writeSchema2Key(CuratorFramework admin, EffectKey key, String scopeRest) throws Exception {
        String keyPath = zk.keyPath();
        admin.create().creatingParentsIfNeeded().forPath(keyPath, utf8("{\"v\":2,\"provider\":\""
                + key.destination().provider() + "\",\"identity\":\"" + key.destination().identity().wireName()
                + "\",\"destination\":\"" + key.destination().id() + "\",\"sha256\":\"" + key.sha256()
                + "\",\"created\":\"2026-11-01T10:00:00Z\"}"));
        admin.create().forPath(keyPath + "/authorizations", new byte[0]);
        String scope0 = keyPath + "/0";
        write(admin, scope0, "{\"v\":2,\"opened\":\"initial\",\"at\":\"2026-11-01T10:00:00Z\"" + scopeRest);
        return scope0;
    }

    private static String holder() {
        return ACTOR.substring(0, ACTOR.length() - 1) + ",\"node\":\"_c_old-latch-0000000000\","
                + "\"expires\":\"2026-11-01T10:00:30Z\"}";
    }

    private static void write(CuratorFramework admin, String path, String json) throws Exception {
        admin.create().forPath(path, utf8(json));
    }

    private static String text(CuratorFramework client, String path) throws Exception {
        return new String(client.getData().forPath(path), StandardCharsets.UTF_8);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
