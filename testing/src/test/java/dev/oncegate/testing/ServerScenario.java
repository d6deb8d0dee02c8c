package dev.oncegate.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * One standalone ZooKeeper per test class, a fresh initialised namespace, key and recording
 * provider per test, and every worker and thread pool a test opens closed after it.
 */
abstract class ServerScenario {

    static EmbeddedZooKeeper zk;

    String ns;
    EffectKey key;
    RecordingProvider provider;
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final List<ExecutorService> pools = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        zk = EmbeddedZooKeeper.start();
    }

    @AfterAll
    static void stopServer() {
        if (zk != null) {
            zk.close();
            zk = null;
        }
    }

    @BeforeEach
    void freshNamespace() {
        ns = Scenarios.freshNamespace();
        zk.initNamespace(ns);
        key = Scenarios.freshKey();
        provider = new RecordingProvider();
    }

    @AfterEach
    void closeEverything() throws Exception {
        for (ExecutorService pool : pools) {
            pool.shutdownNow();
            pool.awaitTermination(10, TimeUnit.SECONDS);
        }
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (RuntimeException e) {
                // already closed or crashed on purpose
            }
        }
        opened.clear();
        pools.clear();
    }

    /** A worker (own client and session) on this test's namespace, closed after the test. */
    Worker worker(String taskId) {
        return worker(taskId, b -> { });
    }

    Worker worker(String taskId, Consumer<Gate.Builder> configure) {
        return track(Worker.start(zk.connectString(), ns, taskId, Timing.SESSION, configure));
    }

    <T extends AutoCloseable> T track(T closeable) {
        opened.add(closeable);
        return closeable;
    }

    ExecutorService pool(int threads) {
        ExecutorService pool = Scenarios.pool(threads);
        pools.add(pool);
        return pool;
    }

    String keyPath() {
        return key.path(ns);
    }
}
