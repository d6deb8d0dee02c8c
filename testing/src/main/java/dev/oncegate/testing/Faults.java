package dev.oncegate.testing;

import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * Faults a scenario can inject into a running ZooKeeper client.
 *
 * <p>{@link #expireSession} ends a client's session <em>on the server</em>, the way a real
 * expiry does: a second connection opened with the victim's session id and password is
 * closed, so the server deletes the session and its ephemeral nodes (latch nodes among them)
 * at once, and the victim learns {@code Expired} on its next contact. Unlike Curator's
 * client-side {@code injectSessionExpiration} (which is all Curator 5's {@code KillSession} does
 * now), nothing about the victim's own state is faked.
 * For the fault on the arming write see {@link AmbiguousWriteCnxnFactory}; for a leader
 * failover see {@link Ensemble#killLeader()}.
 *
 * <p>Stateless and thread-safe.
 */
public final class Faults {

    private Faults() {
    }

    /**
     * Expires the victim's current session on the server and returns its id. Returns once the
     * server has closed the session (its ephemeral nodes are gone); the victim may not have
     * noticed yet: wait on its connection state if the test needs it to.
     *
     * @param victim  a started client with a live session
     * @param timeout how long to wait for the second connection
     * @return the id of the session that was expired
     * @throws IllegalStateException when the victim has no session or the server cannot be reached in time
     */
    public static long expireSession(CuratorFramework victim, Duration timeout) throws InterruptedException {
        Objects.requireNonNull(victim, "victim");
        Objects.requireNonNull(timeout, "timeout");
        ZooKeeper handle;
        try {
            handle = victim.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw new IllegalStateException("victim: no ZooKeeper handle: " + e, e);
        }
        long sessionId = handle.getSessionId();
        byte[] password = handle.getSessionPasswd();
        if (sessionId == 0) {
            throw new IllegalStateException("victim: has no session yet (not connected)");
        }
        String connectString = victim.getZookeeperClient().getCurrentConnectionString();
        CountDownLatch connected = new CountDownLatch(1);
        Watcher watcher = event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        };
        ZooKeeper twin;
        try {
            twin = new ZooKeeper(connectString, (int) Math.max(timeout.toMillis(), 1000), watcher, sessionId, password);
        } catch (IOException e) {
            throw new IllegalStateException("could not open a second connection to " + connectString + ": " + e, e);
        }
        try {
            if (!connected.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the second connection for session 0x" + Long.toHexString(sessionId)
                        + " did not connect within " + timeout);
            }
        } finally {
            // closeSession: the server ends the session for both connections.
            twin.close();
        }
        return sessionId;
    }

    /** The victim's client believes its session expired (client-side only: the server still holds it). */
    public static void expireSessionClientSide(CuratorFramework victim) {
        try {
            victim.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
        } catch (Exception e) {
            throw new IllegalStateException("victim: no ZooKeeper handle: " + e, e);
        }
    }

    /** Closes the victim's socket under it; it reconnects within its session (SUSPENDED, then RECONNECTED). */
    public static void dropConnection(CuratorFramework victim) {
        try {
            victim.getZookeeperClient().getZooKeeper().getTestable().closeSocket();
        } catch (Exception e) {
            throw new IllegalStateException("victim: could not drop its connection: " + e, e);
        }
    }

    /**
     * Stops the server for {@code down}, then restarts it with its data: shorter than the session
     * timeout, sessions survive; longer, they expire.
     */
    public static void outage(EmbeddedZooKeeper server, Duration down) throws InterruptedException {
        server.stop();
        try {
            Thread.sleep(down.toMillis());
        } finally {
            server.restart();
        }
    }

    /** The victim's current session id (0 when it has none). */
    public static long sessionId(CuratorFramework client) {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }
}
