package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.StopReason;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 7, encryption in transit: the gate uses the caller's Curator client, so a client built
 * with a TLS {@code ZKClientConfig} delivers once through a real server whose only client port is
 * TLS, and a plain-text client cannot reach that server at all: its gate fails closed.
 * The CA and keys are made by {@code keytool} once for the class ({@link TlsMaterial}).
 */
class EncryptionInTransitTest {

    static TlsZooKeeper zk;

    String ns;
    EffectKey key;
    RecordingProvider provider;

    @BeforeAll
    static void startTlsOnlyServer() {
        zk = TlsZooKeeper.start();
    }

    @AfterAll
    static void stopServer() {
        if (zk != null) {
            zk.close(); // and its keys
        }
        // The server's TLS settings lived in system properties while it ran; nothing of them is left
        assertThat(System.getProperties().stringPropertyNames())
                .noneMatch(k -> k.startsWith("zookeeper.ssl.") || k.equals("zookeeper.serverCnxnFactory"));
    }

    @BeforeEach
    void freshNamespace() {
        ns = Scenarios.freshNamespace();
        zk.initNamespace(ns);
        key = Scenarios.freshKey();
        provider = new RecordingProvider();
    }

    @Test
    void gateOverTlsClient_deliversOnce_andALaterContenderStops() throws Exception {
        // Given two workers, each with its own TLS client (the caller's Curator, with a ZKClientConfig)
        try (CuratorFramework first = zk.newClient(Timing.SESSION);
             CuratorFramework later = zk.newClient(Timing.SESSION);
             Gate a = Gate.builder(first).namespace(ns).taskId("tls-a").build();
             Gate b = Gate.builder(later).namespace(ns).taskId("tls-b").build()) {
            // When the first enters and crosses
            Crossing crossing;
            try (Attempt attempt = a.enter(key, Timing.WAIT)) {
                assertThat(attempt.decision()).isInstanceOf(Decision.Proceed.class);
                crossing = attempt.cross(provider.verified());
            }
            // and the later contender enters afterwards
            Decision second;
            try (Attempt attempt = b.enter(key, Timing.WAIT)) {
                second = attempt.decision();
            }

            // Then it was delivered once, recorded over TLS, and the later contender stopped
            assertThat(crossing).isInstanceOf(Crossing.Crossed.class);
            assertThat(provider.deliveries()).isEqualTo(1);
            assertThat(provider.ledger().get(0).taskId()).isEqualTo("tls-a");
            assertThat(second).isInstanceOfSatisfying(Decision.StopSent.class,
                    stop -> assertThat(stop.reason()).isEqualTo(StopReason.SENT_VERIFIED));
            assertThat(b.inspect(key.key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
        }
    }

    @Test
    void plainTextClient_cannotConnect_andItsGateFailsClosedWritingNothing() throws Exception {
        // Given a client without the TLS configuration, pointed at the TLS-only port
        try (CuratorFramework plain = EmbeddedZooKeeper.newClient(zk.connectString(), Timing.SESSION);
             Gate gate = Gate.builder(plain).namespace(ns).taskId("plain").connectTimeout(Timing.scaled(2_000)).build();
             CuratorFramework auditor = zk.newClient()) {
            // When a worker enters the gate over it
            Decision decision;
            try (Attempt attempt = gate.enter(key, Timing.scaled(1_000))) {
                decision = attempt.decision();
                if (decision.proceeds()) {
                    attempt.cross(provider.verified());
                }
            }

            // Then the server never let it in (no session was ever established), the gate failed
            // closed, nothing ran and nothing was written
            assertThat(plain.getZookeeperClient().getZooKeeper().getSessionId()).isZero();
            assertThat(decision).isInstanceOfSatisfying(Decision.StopUnavailable.class,
                    stop -> assertThat(stop.reason()).isEqualTo(StopReason.ZOOKEEPER_UNREACHABLE));
            assertThat(provider.deliveries()).isZero();
            assertThat(auditor.checkExists().forPath(key.path(ns))).isNull();
        }
    }

    @Test
    void clientCertificateSubject_isTheSessionsX509Identity() throws Exception {
        // Given a znode only the x509 identity of the material's client certificate may touch
        String path = ns + "/x509-only";
        List<ACL> onlyTheClient = List.of(new ACL(ZooDefs.Perms.ALL, new Id("x509", TlsMaterial.CLIENT_SUBJECT)));
        try (CuratorFramework client = zk.newClient()) {
            client.create().withACL(onlyTheClient).forPath(path, "secret".getBytes(StandardCharsets.UTF_8));

            // When the same client reads it back, Then its certificate's subject is what matched the ACL
            assertThat(new String(client.getData().forPath(path), StandardCharsets.UTF_8)).isEqualTo("secret");
            assertThat(client.getACL().forPath(path)).containsExactlyElementsOf(onlyTheClient);
        }
    }
}
