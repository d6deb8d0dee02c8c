package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.StopReason;
import dev.oncegate.testing.AmbiguousWriteCnxnFactory;
import dev.oncegate.testing.Timing;
import dev.oncegate.testing.Worker;
import dev.oncegate.testing.ZooKeeperExtension;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An MCP session that ends while one of its crossings is in flight counts it as a crossing the
 * agent never reported (exit 1, "recorded send_status_unknown") only when that crossing armed:
 * one the library then refuses armed nothing and recorded nothing, so the key is as free as
 * before and the session's exit must not say otherwise.
 */
class McpSessionEndTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standaloneWithAmbiguousWrites();

    @Test
    void sessionEndingWhileACrossIsInFlight_thatIsThenRefused_countsNoUnreportedCrossing() throws Exception {
        // Given a session holding an effect, whose cross_effect is in flight: the server holds its arming write
        Worker agent = zk.newWorker("mcp-agent", Timing.LONG_SESSION, b -> { }); // the hold must not outlive the connection
        Gate gate = agent.gate();
        McpSession session = new McpSession(gate, () -> { });
        EffectKey key = zk.newKey();
        assertThat(session.check(key, Duration.ZERO).awaitEntry().proceeds()).isTrue();
        AmbiguousWriteCnxnFactory.Hold hold = AmbiguousWriteCnxnFactory.holdNextArmingRequest();
        CompletableFuture<Object> cross = CompletableFuture.supplyAsync(() -> {
            try {
                return session.cross(key.key(), null);
            } catch (Exception e) {
                return e;
            }
        });
        assertThat(hold.awaitHeld(Timing.EVENTUALLY)).as("the arming request reached the server").isTrue();

        // When the session ends meanwhile, and the lease is fenced before the server applies the arming write
        // (its version moves on: the write's fencing check fails)
        CompletableFuture<Integer> end = CompletableFuture.supplyAsync(() -> {
            try {
                return session.end("the MCP client closed the session", Timing.WAIT);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        CuratorFramework admin = zk.newClient();
        String scope = key.path(zk.namespace()) + "/0";
        admin.setData().forPath(scope, admin.getData().forPath(scope));
        hold.release();

        // Then the cross was refused, nothing was armed, and the session counts no crossing left unreported
        Object answer = cross.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(agent.connectionInterrupted()).as("premise: the connection outlived the hold").isFalse();
        assertThat(answer).isInstanceOfSatisfying(McpEffect.CrossAnswer.class, a -> {
            assertThat(a.armed()).isNull();
            assertThat(a.refused()).isNotNull();
            assertThat(a.refused().reason()).isNotEqualTo(StopReason.UNREADABLE_RECORD);
        });
        assertThat(end.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("crossings ended unreported").isZero();
        assertThat(session.unrecorded()).isZero();
        assertThat(admin.checkExists().forPath(scope + "/armed")).isNull();
    }
}
