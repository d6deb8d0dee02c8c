package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import dev.oncegate.ScopeState;
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
        CompletableFuture<Object> cross = crossInFlight(session, key, hold);

        // When the session ends meanwhile, and the lease is fenced before the server applies the arming write
        // (its version moves on: the write's fencing check fails)
        CompletableFuture<Integer> end = ending(session);
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
    @Test
    void sessionEndingWhileACrossIsInFlight_thatThenArms_recordsNotSent_forTheAgentWasNeverToldToProceed() throws Exception {
        // Given a session holding an effect, whose cross_effect is in flight: the server holds its arming write
        Worker agent = zk.newWorker("mcp-agent", Timing.LONG_SESSION, b -> { });
        McpSession session = new McpSession(agent.gate(), () -> { });
        EffectKey key = zk.newKey();
        assertThat(session.check(key, Duration.ZERO).awaitEntry().proceeds()).isTrue();
        AmbiguousWriteCnxnFactory.Hold hold = AmbiguousWriteCnxnFactory.holdNextArmingRequest();
        CompletableFuture<Object> cross = crossInFlight(session, key, hold);

        // When the session ends meanwhile (the MCP client closed stdin), and the server then applies the arming write
        CompletableFuture<Integer> end = ending(session);
        hold.release();

        // Then cross_effect never answered proceed, the scope is recorded not_sent (nothing was submitted: the agent
        // was never told it may), the session counts nothing unreported, and the next contender proceeds in scope 1
        Object answer = cross.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(agent.connectionInterrupted()).as("premise: the connection outlived the hold").isFalse();
        assertThat(answer instanceof McpEffect.CrossAnswer a && a.armed() != null).as("cross_effect answered proceed: %s",
                answer).isFalse();
        assertThat(end.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("crossings ended unreported").isZero();
        assertThat(session.unrecorded()).isZero();
        KeyHistory h = agent.gate().inspect(key.key());
        assertThat(h.scopes().get(0).state()).isEqualTo(ScopeState.NOT_SENT);
        try (Attempt next = zk.newWorker("sibling").gate().enter(key)) {
            assertThat(next.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
        }
    }

    /** {@code cross_effect} of {@code key} on another thread, once the server holds its arming write: its answer or failure. */
    private static CompletableFuture<Object> crossInFlight(McpSession session, EffectKey key, AmbiguousWriteCnxnFactory.Hold hold)
            throws InterruptedException {
        CompletableFuture<Object> cross = CompletableFuture.supplyAsync(() -> {
            try {
                return session.cross(key.key(), null);
            } catch (Exception e) {
                return e;
            }
        });
        assertThat(hold.awaitHeld(Timing.EVENTUALLY)).as("the arming request reached the server").isTrue();
        return cross;
    }

    /** The session's end, as the MCP client closing stdin makes it, on another thread: how many crossings it left unreported. */
    private static CompletableFuture<Integer> ending(McpSession session) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return session.end("the MCP client closed the session", Timing.WAIT);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }
}
