package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The extension's per-test lifecycle: a test that leaves its server stopped, a pool busy and a
 * ledger written does not leak any of it into the next test.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ZooKeeperExtensionPerTestTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone().perTest();

    static String firstKeyPath;
    static ExecutorService firstPool;
    static Future<?> firstTask;

    @Test
    @Order(1)
    void aTestThatStopsItsServer_andLeavesAThreadWaiting() throws Exception {
        firstKeyPath = zk.keyPath();
        try (var attempt = zk.newGate("task-a").enter(zk.key())) {
            attempt.cross(zk.provider().verified());
        }
        firstPool = zk.newPool(1);
        CountDownLatch never = new CountDownLatch(1);
        firstTask = firstPool.submit(() -> {
            never.await(); // stands for a contender still blocked in enter
            return null;
        });
        zk.server().stop();
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    @Order(2)
    void theNextTest_getsANewServingServer_anEmptyLedger_aNewKey_andTheOldPoolIsStopped() throws Exception {
        var client = zk.newClient();
        assertThat(client.checkExists().forPath(zk.namespace() + "/genesis")).isNotNull();
        assertThat(client.checkExists().forPath(firstKeyPath)).as("the first test's server, data and all, is gone").isNull();
        assertThat(zk.keyPath()).isNotEqualTo(firstKeyPath);
        assertThat(zk.newGate("task-b").inspect(zk.key().key()).exists()).isFalse();
        assertThat(zk.provider().deliveries()).isZero();
        assertThat(firstPool.isTerminated()).isTrue();
        assertThat(firstTask.isCancelled() || firstTask.isDone()).isTrue();
    }
}
