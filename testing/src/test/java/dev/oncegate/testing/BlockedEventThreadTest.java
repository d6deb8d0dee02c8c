package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Watcher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No false {@code permission_denied}: an application watcher that blocks the client's event
 * thread also delays Curator's latch callbacks, so a permitted contender's election node looks
 * missing for a while. Whether it may create that node is asked of ZooKeeper, never guessed from
 * elapsed time; the contender proceeds once the thread is free.
 */
class BlockedEventThreadTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void applicationWatcherBlocksTheEventThread_contenderStillProceeds() throws Exception {
        Worker w = zk.newWorker("task-a");
        CuratorFramework other = zk.newClient();
        String blocker = zk.namespace() + "-blocker";
        other.create().forPath(blocker, "0".getBytes(StandardCharsets.UTF_8));
        // Given an application watcher on the worker's client that holds the event thread for twice
        // the grace a missing election node used to get
        CountDownLatch blocking = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        w.client().getData().usingWatcher((Watcher) event -> {
            blocking.countDown();
            try {
                never.await(4, TimeUnit.SECONDS); // a slow application callback
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }).forPath(blocker);
        other.setData().forPath(blocker, "1".getBytes(StandardCharsets.UTF_8));
        assertThat(blocking.await(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();

        // When the worker enters a fresh key meanwhile (its latch's callbacks wait behind the watcher)
        Future<Decision> decision = zk.newPool(1).submit(() -> {
            try (Attempt attempt = w.gate().enter(zk.key(), Timing.WAIT)) {
                return attempt.decision();
            }
        });
        // Then it proceeds once the event thread is free: it was never refused for "missing permission"
        assertThat(decision.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isInstanceOf(Decision.Proceed.class);
    }
}
