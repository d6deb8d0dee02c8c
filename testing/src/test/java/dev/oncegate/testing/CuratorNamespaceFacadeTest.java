package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Gate;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A gate built over a Curator namespace facade ({@code client.usingNamespace("app")}): the raw
 * arming multi and the latch-node checks must agree with Curator's path prefixing.
 */
class CuratorNamespaceFacadeTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void gateOverNamespaceFacade_deliversOnceAndRecordsUnderThePrefix() throws Exception {
        // Given two workers whose clients are namespaced to /app
        CuratorFramework rawA = zk.newClient();
        CuratorFramework rawB = zk.newClient();
        CuratorFramework appA = rawA.usingNamespace("app");
        CuratorFramework appB = rawB.usingNamespace("app");
        Gate.initialize(appA, zk.namespace());
        Gate gateA = zk.track(Gate.builder(appA).namespace(zk.namespace()).taskId("task-a").build());
        Gate gateB = zk.track(Gate.builder(appB).namespace(zk.namespace()).taskId("task-b").build());

        // When A proceeds, B waits, A's process dies before arming, and B takes over
        Attempt attemptA = gateA.enter(zk.key());
        assertThat(attemptA.decision().proceeds()).isTrue();
        Future<Attempt> enteredB = Scenarios.enterAsync(zk.newPool(1), gateB, zk.key(), Timing.WAIT);
        Scenarios.eventually("B waits, watching scope 0", () -> Scenarios.watched(zk, "/app" + zk.keyPath() + "/0"));
        rawA.close();
        Crossing crossing;
        try (Attempt attemptB = enteredB.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(attemptB.decision()).isInstanceOf(Decision.Proceed.class);
            crossing = attemptB.cross(zk.provider().verified());
        }

        // Then exactly one delivery, recorded under /app<ns>, and later contenders stop sent
        assertThat(crossing).isInstanceOf(Crossing.Crossed.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(Scenarios.armedNode(rawB, "/app" + zk.keyPath() + "/0")).isNotNull();
        assertThat(rawB.checkExists().forPath("/app" + zk.keyPath() + "/0/armed/outcome")).isNotNull();
        assertThat(rawB.checkExists().forPath(zk.keyPath())).isNull();
        try (Attempt late = gateB.enter(zk.key())) {
            assertThat(late.decision()).isInstanceOf(Decision.StopSent.class);
        }
        assertThat(gateB.inspect(zk.key().key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
