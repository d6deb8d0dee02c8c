package dev.oncegate.cli;

import java.time.Duration;

import dev.oncegate.testing.EmbeddedZooKeeper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ZooKeeperConnection#close} returns without ZooKeeper's 100 ms socket cleanup, but never
 * before the session is over at the server: what the session owned is gone the moment it returns,
 * as after a plain Curator close (and not left to the session timeout, as after a crash).
 */
class ZooKeeperConnectionCloseTest {

    static EmbeddedZooKeeper zk;
    static CuratorFramework observer;

    @BeforeAll
    static void start() {
        zk = EmbeddedZooKeeper.start();
        observer = zk.newClient();
    }

    @AfterAll
    static void stop() {
        observer.close();
        zk.close();
    }

    @Test
    void closeReturnsWithTheSessionEndedAtTheServer() throws Exception {
        for (int i = 0; i < 5; i++) {
            ZooKeeperConnection connection = ZooKeeperConnection.open(
                    ZooKeeperConnection.Settings.plain(zk.connectString(), Duration.ofSeconds(10)), "/oncegate", null);
            connection.awaitConnected();
            String path = "/close-test-" + i;
            connection.client().create().withMode(CreateMode.EPHEMERAL).forPath(path);
            assertThat(observer.checkExists().forPath(path)).isNotNull();

            connection.close();

            // Read on another session, after close returned: the server has already ended the session.
            assertThat(observer.checkExists().forPath(path)).as("ephemeral of the closed session").isNull();
            assertThat(connection.client().getState()).isEqualTo(CuratorFrameworkState.STOPPED);
        }
    }

    @Test
    void aClientThatNeverConnected_closesOnTheCallingThread() {
        // Port 1 on 127.0.0.1: nothing listens, the client never connects.
        ZooKeeperConnection connection = ZooKeeperConnection.open(
                ZooKeeperConnection.Settings.plain("127.0.0.1:1", Duration.ofMillis(200)), "/oncegate", null);

        connection.close();

        assertThat(connection.client().getState()).isEqualTo(CuratorFrameworkState.STOPPED);
        assertThat(connection.client().getZookeeperClient().isConnected()).isFalse();
    }
}
