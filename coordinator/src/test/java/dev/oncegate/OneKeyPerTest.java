package dev.oncegate;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A gate test on {@link OneServerPerClass}'s server: each test gets a fresh initialised namespace (no ACLs)
 * and a fresh effect key, not created yet; the attempts and gates a test lists are closed after it.
 */
abstract class OneKeyPerTest extends OneServerPerClass {

    String ns;
    EffectKey key;
    String keyPath;
    String scope0;
    final List<Gate> gates = new ArrayList<>();
    final List<Attempt> attempts = new ArrayList<>();

    @BeforeEach
    void freshNamespaceAndKey() throws Exception {
        ns = "/" + getClass().getSimpleName() + "-" + UUID.randomUUID();
        Gate.initialize(client, ns);
        key = EffectKey.of(Destination.stable("slack", "C1"), UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8));
        keyPath = Layout.keyPath(ns, key.key());
        scope0 = Layout.scope(keyPath, 0);
    }

    @AfterEach
    void closeAttemptsAndGates() {
        attempts.forEach(Attempt::close);
        gates.forEach(Gate::close);
    }

    /** {@code g.enter(key, wait)} on another thread; the attempt is closed after the test. */
    CompletableFuture<Attempt> enterAsync(Gate g, Duration wait) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                Attempt a = g.enter(key, wait);
                synchronized (attempts) {
                    attempts.add(a);
                }
                return a;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
    }
}
