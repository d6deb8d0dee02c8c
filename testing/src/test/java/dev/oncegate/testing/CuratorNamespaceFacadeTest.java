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

/**
 * A gate built over a Curator namespace facade ({@code client.usingNamespace("app")}): the raw
 * arming multi and the latch-node checks must agree with Curator's path prefixing.
 */
class CuratorNamespaceFacadeTest extends ServerScenario {

    @Test
    void gateOverNamespaceFacade_deliversOnceAndRecordsUnderThePrefix() throws Exception {
        // Given two workers whose clients are namespaced to /app
        CuratorFramework rawA = track(zk.newClient(Timing.SESSION));
        CuratorFramework rawB = track(zk.newClient(Timing.SESSION));
        CuratorFramework appA = rawA.usingNamespace("app");
        CuratorFramework appB = rawB.usingNamespace("app");
        Gate.initialize(appA, ns);
        Gate gateA = track(Gate.builder(appA).namespace(ns).taskId("task-a").build());
        Gate gateB = track(Gate.builder(appB).namespace(ns).taskId("task-b").build());

        // When A proceeds, B waits, A's process dies before arming, and B takes over
        Attempt attemptA = gateA.enter(key);
        assertThat(attemptA.decision().proceeds()).isTrue();
        Future<Attempt> enteredB = Scenarios.enterAsync(pool(1), gateB, key, Timing.WAIT);
        Scenarios.eventually("B joined the election", () -> Scenarios.latchMembers(rawA, "/app" + keyPath(), 0) == 2);
        rawA.close();
        Crossing crossing;
        try (Attempt attemptB = enteredB.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(attemptB.decision()).isInstanceOf(Decision.Proceed.class);
            crossing = attemptB.cross(provider.verified());
        }

        // Then exactly one delivery, recorded under /app<ns>, and later contenders stop sent
        assertThat(crossing).isInstanceOf(Crossing.Crossed.class);
        assertThat(provider.deliveries()).isEqualTo(1);
        assertThat(Scenarios.armedNode(rawB, "/app" + keyPath() + "/0")).isNotNull();
        assertThat(rawB.checkExists().forPath("/app" + keyPath() + "/0/outcome")).isNotNull();
        assertThat(rawB.checkExists().forPath(keyPath())).isNull();
        try (Attempt late = gateB.enter(key)) {
            assertThat(late.decision()).isInstanceOf(Decision.StopSent.class);
        }
        assertThat(gateB.inspect(key.key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
