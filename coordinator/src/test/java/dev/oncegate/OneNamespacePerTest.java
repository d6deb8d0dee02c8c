package dev.oncegate;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;

/**
 * A protocol test on {@link OneServerPerClass}'s server: each test gets a fresh initialised
 * namespace, a {@link ScopeProtocol} over it without ACLs, and a fresh effect key (not created).
 */
abstract class OneNamespacePerTest extends OneServerPerClass {

    String ns;
    ScopeProtocol protocol;
    String genesisId;
    EffectKey key;
    String keyPath;

    @BeforeEach
    void freshNamespace() throws Exception {
        ns = "/" + getClass().getSimpleName() + "-" + UUID.randomUUID();
        protocol = new ScopeProtocol(client, ns, Clock.systemUTC(), zxid -> { }, () -> Acls.OPEN);
        genesisId = protocol.operator().createGenesis(null).genesis().id();
        key = EffectKey.of(Destination.stable("slack", "C1"), UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8));
        keyPath = Layout.keyPath(ns, key.key());
    }
}
