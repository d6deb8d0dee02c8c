package dev.oncegate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * The calls of {@link ZooKeeperOps} on a raw {@link ZooKeeper} handle, without retries or
 * recipes: what a real server answers, for {@link SimZooKeeperConformanceTest} to hold the model
 * against. Connection listeners and elections are not offered (they are Curator's, not the server's).
 *
 * <p>Thread-safe as the ZooKeeper handle is.
 */
record RawZooKeeperOps(ZooKeeper zk, String connectString) implements ZooKeeperOps {

    /** ZooKeeper's client asks {@code acl.contains(null)}, which List.of refuses: a copy that answers. */
    private static List<ACL> orOpen(List<ACL> acl) {
        return new ArrayList<>(acl != null ? acl : ZooDefs.Ids.OPEN_ACL_UNSAFE);
    }

    @Override
    public byte[] getData(String path, Stat stat, Watcher watcher) throws Exception {
        return zk.getData(path, watcher, stat);
    }

    @Override
    public List<String> getChildren(String path, Watcher watcher) throws Exception {
        return zk.getChildren(path, watcher);
    }

    @Override
    public Stat exists(String path, Watcher watcher) throws Exception {
        return zk.exists(path, watcher);
    }

    @Override
    public List<ACL> getAcl(String path, Stat stat) throws Exception {
        return zk.getACL(path, stat);
    }

    @Override
    public String create(String path, byte[] data, CreateMode mode, List<ACL> acl, Stat stat, boolean parents) throws Exception {
        try {
            return zk.create(path, data, orOpen(acl), mode, stat);
        } catch (KeeperException.NoNodeException e) {
            if (!parents) {
                throw e;
            }
            ZKPaths.mkdirs(zk, path, false);
            return zk.create(path, data, orOpen(acl), mode, stat);
        }
    }

    @Override
    public Stat setData(String path, byte[] data, int version) throws Exception {
        return zk.setData(path, data, version);
    }

    @Override
    public void delete(String path, int version) throws Exception {
        zk.delete(path, version);
    }

    @Override
    public Stat setAcl(String path, List<ACL> acl, int aclVersion) throws Exception {
        return zk.setACL(path, orOpen(acl), aclVersion);
    }

    @Override
    public List<OpResult> multi(List<Op> ops) throws Exception {
        return zk.multi(ops);
    }

    /** As CuratorOps sends it: ZooKeeper's asynchronous multi, whose callback gives the return code and results. */
    @Override
    public MultiReply multiOnce(List<Op> ops, Duration replyBound) throws Exception {
        CompletableFuture<MultiReply> reply = new CompletableFuture<>();
        zk.multi(ops, (rc, path, ctx, results) -> reply.complete(new MultiReply(rc, results, false)), null);
        return reply.get(replyBound.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public Op opCheck(String path, int version) {
        return Op.check(path, version);
    }

    @Override
    public Op opCreate(String path, byte[] data, CreateMode mode, List<ACL> acl) {
        return Op.create(path, data, orOpen(acl), mode);
    }

    @Override
    public Op opSetData(String path, byte[] data, int version) {
        return Op.setData(path, data, version);
    }

    @Override
    public Op opDelete(String path, int version) {
        return Op.delete(path, version);
    }

    @Override
    public Op opGetData(String path) {
        return Op.getData(path);
    }

    @Override
    public Op opGetChildren(String path) {
        return Op.getChildren(path);
    }

    @Override
    public void removeWatches(String path, Watcher watcher) {
        try {
            if (watcher == null) {
                zk.removeAllWatches(path, Watcher.WatcherType.Any, false);
            } else {
                zk.removeWatches(path, watcher, Watcher.WatcherType.Any, false);
            }
        } catch (KeeperException e) {
            // NoWatcher and the like: the interface only logs them
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public long sessionId() {
        return zk.getSessionId();
    }

    @Override
    public int sessionTimeoutMs() {
        return zk.getSessionTimeout();
    }

    @Override
    public boolean connected() {
        return zk.getState().isConnected();
    }

    @Override
    public boolean awaitConnected(Duration timeout) {
        throw new UnsupportedOperationException("a raw handle has no connection wait");
    }

    @Override
    public boolean started() {
        return zk.getState().isAlive();
    }

    @Override
    public void listen(Consumer<ConnectionState> states, BiConsumer<String, Throwable> errors) {
        throw new UnsupportedOperationException("connection states are Curator's");
    }

    @Override
    public void close() {
        // the handle is the test's
    }

    @Override
    public ElectionMember joinElection(String latchPath, String id, Runnable onChange) {
        throw new UnsupportedOperationException("elections are Curator's");
    }
}
