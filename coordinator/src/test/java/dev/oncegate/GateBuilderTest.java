package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.SessionConnectionStateErrorPolicy;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;

/** The builder and the attempt refuse misuse with messages that name the field, before any write. */
class GateBuilderTest extends OneServerPerClass {

    @Test
    void builderSetters_validateTheirArguments() {
        Gate.Builder b = Gate.builder(client);
        assertThatThrownBy(() -> b.namespace("relative")).hasMessageStartingWith("namespace:");
        assertThatThrownBy(() -> b.namespace("/zookeeper/x")).hasMessageStartingWith("namespace:");
        assertThatThrownBy(() -> b.leaseTtl(Duration.ofMillis(5))).hasMessageStartingWith("leaseTtl:");
        assertThatThrownBy(() -> b.connectTimeout(Duration.ofSeconds(-1))).hasMessageStartingWith("connectTimeout:");
        assertThatThrownBy(() -> b.taskId("")).hasMessageStartingWith("taskId:");
        assertThatThrownBy(() -> b.meterRegistry(null)).isInstanceOf(NullPointerException.class).hasMessage("meterRegistry");
        b.namespace("/ok");
        assertThatThrownBy(() -> b.namespace("/again")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already set");
    }

    @Test
    void build_refusesAClientThatIsNotStarted_orUsesTheSessionErrorPolicy() {
        try (CuratorFramework unstarted = CuratorFrameworkFactory.newClient(zk.server().getConnectString(), new RetryOneTime(1));
             CuratorFramework sessionPolicy = CuratorFrameworkFactory.builder().connectString(zk.server().getConnectString())
                     .retryPolicy(new RetryOneTime(1))
                     .connectionStateErrorPolicy(new SessionConnectionStateErrorPolicy()).build()) {
            assertThatThrownBy(() -> Gate.builder(unstarted).build()).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("started");
            sessionPolicy.start();
            assertThatThrownBy(() -> Gate.builder(sessionPolicy).build()).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("StandardConnectionStateErrorPolicy");
        }
    }

    @Test
    void attemptMisuse_isRefused_andAnUninitialisedNamespaceWritesNothing() throws Exception {
        EffectKey key = EffectKey.of(Destination.stable("slack", "C1"), "x".getBytes(StandardCharsets.UTF_8));
        try (Gate gate = Gate.builder(client).namespace("/uninitialised").build()) {
            assertThatThrownBy(() -> gate.enter(key, Duration.ofSeconds(-1))).hasMessageStartingWith("wait:");
            try (Attempt attempt = gate.enter(key)) {
                assertThat(attempt.decision()).isInstanceOf(Decision.StopUnavailable.class);
                assertThat(((Decision.Stop) attempt.decision()).reason()).isEqualTo(StopReason.NAMESPACE_NOT_INITIALISED);
                assertThat(((Decision.Stop) attempt.decision()).evidence().detail()).contains("oncegate init");
                assertThatThrownBy(() -> attempt.cross(ctx -> ActionResult.verified("never")))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("stop_unavailable");
                assertThat(attempt.checkpoint("after-stop")).isSameAs(attempt.decision());
            }
            assertThatThrownBy(() -> gate.inspect("not-a-key")).hasMessageStartingWith("key:");
        }
        assertThat(client.checkExists().forPath("/uninitialised")).isNull();
    }

    @Test
    void initialize_isIdempotent_andAGateThenProceeds() throws Exception {
        Gate.Initialization first = Gate.initialize(client, "/init-twice");
        Gate.Initialization second = Gate.initialize(client, "/init-twice");
        assertThat(first.created()).isTrue();
        assertThat(second.created()).isFalse();
        assertThat(second.genesis()).isEqualTo(first.genesis());

        EffectKey key = EffectKey.of(Destination.stable("slack", "C2"), "y".getBytes(StandardCharsets.UTF_8));
        try (Gate gate = Gate.builder(client).namespace("/init-twice").build(); Attempt attempt = gate.enter(key)) {
            assertThat(attempt.decision()).isInstanceOf(Decision.Proceed.class);
            assertThat(attempt.checkpoint("first").proceeds()).isTrue();
        }
        // Leaving before arming released the lease: the scope is open again for the next contender.
        try (Gate gate = Gate.builder(client).namespace("/init-twice").build()) {
            assertThat(gate.inspect(key.key()).scopes().get(0).state()).isEqualTo(ScopeState.OPEN);
        }
    }
}
