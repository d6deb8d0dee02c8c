package dev.oncegate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.apache.curator.RetryLoop;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.UnhandledErrorListener;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ZooKeeperOps} on a caller-owned Curator client: each method is the Curator call the protocol
 * made before the seam, with Curator's namespace, ACL provider and retry policy. Elections are Curator
 * {@link LeaderLatch}es, left through {@link Elections}.
 *
 * <p>Thread-safe.
 */
final class CuratorOps implements ZooKeeperOps {

    private static final Logger LOG = LoggerFactory.getLogger(CuratorOps.class);

    private final CuratorFramework client;
    private final Elections elections;
    private final List<ConnectionStateListener> stateListeners = new CopyOnWriteArrayList<>();
    private final List<UnhandledErrorListener> errorListeners = new CopyOnWriteArrayList<>();

    /** @param name names the thread that closes left elections (the task id) */
    CuratorOps(CuratorFramework client, String name) {
        this.client = client;
        this.elections = new Elections(name);
    }

    /** The client (for the ACL walk, which runs its reads in the background and is not part of the simulated protocol). */
    CuratorFramework client() {
        return client;
    }

    /** How many left elections wait for their turn to be closed. */
    int electionsWaiting() {
        return elections.waiting();
    }

    @Override
    public byte[] getData(String path, Stat stat, Watcher watcher) throws Exception {
        if (watcher != null) {
            return stat == null ? client.getData().usingWatcher(watcher).forPath(path)
                    : client.getData().storingStatIn(stat).usingWatcher(watcher).forPath(path);
        }
        return stat == null ? client.getData().forPath(path) : client.getData().storingStatIn(stat).forPath(path);
    }

    @Override
    public List<String> getChildren(String path, Watcher watcher) throws Exception {
        return watcher == null ? client.getChildren().forPath(path) : client.getChildren().usingWatcher(watcher).forPath(path);
    }

    @Override
    public Stat exists(String path, Watcher watcher) throws Exception {
        return watcher == null ? client.checkExists().forPath(path) : client.checkExists().usingWatcher(watcher).forPath(path);
    }

    @Override
    public List<ACL> getAcl(String path, Stat stat) throws Exception {
        return stat == null ? client.getACL().forPath(path) : client.getACL().storingStatIn(stat).forPath(path);
    }

    @Override
    public String create(String path, byte[] data, CreateMode mode, List<ACL> acl, Stat stat, boolean parents)
            throws Exception {
        var builder = client.create();
        if (stat != null) {
            builder.storingStatIn(stat);
        }
        if (parents) {
            builder.creatingParentsIfNeeded();
        }
        var withAcl = acl == null ? builder.withMode(mode) : builder.withMode(mode).withACL(acl, false);
        return data == null ? withAcl.forPath(path) : withAcl.forPath(path, data);
    }

    @Override
    public Stat setData(String path, byte[] data, int version) throws Exception {
        return client.setData().withVersion(version).forPath(path, data);
    }

    @Override
    public void delete(String path, int version) throws Exception {
        client.delete().withVersion(version).forPath(path);
    }

    @Override
    public Stat setAcl(String path, List<ACL> acl, int aclVersion) throws Exception {
        return client.setACL().withVersion(aclVersion).withACL(acl).forPath(path);
    }

    @Override
    public List<OpResult> multi(List<Op> ops) throws Exception {
        // What Curator's transaction().forOperations does in the foreground, without re-wrapping the results.
        return RetryLoop.callWithRetry(client.getZookeeperClient(), () -> client.getZookeeperClient().getZooKeeper().multi(ops));
    }

    @Override
    public MultiReply multiOnce(List<Op> ops, Duration replyBound) throws Exception {
        CompletableFuture<MultiReply> reply = new CompletableFuture<>();
        client.getZookeeperClient().getZooKeeper().multi(ops,
                (rc, path, ctx, results) -> reply.complete(new MultiReply(rc, results, false)), null);
        boolean interrupted = false;
        long deadline = System.nanoTime() + replyBound.toNanos();
        MultiReply result;
        while (true) {
            try {
                result = reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                break;
            } catch (InterruptedException e) {
                interrupted = true; // the write is on its way: learn its result first
            } catch (TimeoutException e) {
                result = new MultiReply(KeeperException.Code.OPERATIONTIMEOUT.intValue(), null, false);
                break;
            } catch (ExecutionException e) {
                throw new IllegalStateException("the multi callback failed", e.getCause());
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return new MultiReply(result.rc(), result.results(), interrupted);
    }

    @Override
    public Op opCheck(String path, int version) throws Exception {
        return client.transactionOp().check().withVersion(version).forPath(path).get();
    }

    @Override
    public Op opCreate(String path, byte[] data, CreateMode mode, List<ACL> acl) throws Exception {
        var create = client.transactionOp().create().withMode(mode);
        return (acl == null ? create : create.withACL(acl)).forPath(path, data).get();
    }

    @Override
    public Op opSetData(String path, byte[] data, int version) throws Exception {
        return client.transactionOp().setData().withVersion(version).forPath(path, data).get();
    }

    @Override
    public Op opDelete(String path, int version) throws Exception {
        return client.transactionOp().delete().withVersion(version).forPath(path).get();
    }

    @Override
    public Op opGetData(String path) {
        return Op.getData(ZKPaths.fixForNamespace(client.getNamespace(), path));
    }

    @Override
    public Op opGetChildren(String path) {
        return Op.getChildren(ZKPaths.fixForNamespace(client.getNamespace(), path));
    }

    @Override
    public void removeWatches(String path, Watcher watcher) {
        BackgroundCallback logged = (c, event) -> {
            if (event.getResultCode() != KeeperException.Code.OK.intValue()
                    && event.getResultCode() != KeeperException.Code.NOWATCHER.intValue()) {
                LOG.debug("could not remove the watches on {}: {}", path, KeeperException.Code.get(event.getResultCode()));
            }
        };
        try {
            if (watcher != null) {
                client.watchers().remove(watcher).ofType(Watcher.WatcherType.Any).quietly().inBackground(logged).forPath(path);
            } else {
                client.watchers().removeAll().ofType(Watcher.WatcherType.Any).quietly().inBackground(logged).forPath(path);
            }
        } catch (Exception e) {
            LOG.debug("could not remove the watches on {}: {}", path, e.toString());
        }
    }

    @Override
    public long sessionId() throws Exception {
        return client.getZookeeperClient().getZooKeeper().getSessionId();
    }

    @Override
    public int sessionTimeoutMs() throws Exception {
        return client.getZookeeperClient().getZooKeeper().getSessionTimeout();
    }

    @Override
    public boolean connected() {
        return client.getZookeeperClient().isConnected();
    }

    @Override
    public boolean awaitConnected(Duration timeout) throws InterruptedException {
        return client.blockUntilConnected((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()), TimeUnit.MILLISECONDS);
    }

    @Override
    public boolean started() {
        return client.getState() == CuratorFrameworkState.STARTED;
    }

    @Override
    public String connectString() {
        return client.getZookeeperClient().getCurrentConnectionString();
    }

    @Override
    public void listen(Consumer<ConnectionState> states, BiConsumer<String, Throwable> errors) {
        ConnectionStateListener stateListener = (c, state) -> states.accept(state);
        UnhandledErrorListener errorListener = errors::accept;
        stateListeners.add(stateListener);
        errorListeners.add(errorListener);
        client.getConnectionStateListenable().addListener(stateListener);
        client.getUnhandledErrorListenable().addListener(errorListener);
    }

    @Override
    public void close() {
        for (ConnectionStateListener l : new ArrayList<>(stateListeners)) {
            client.getConnectionStateListenable().removeListener(l);
        }
        for (UnhandledErrorListener l : new ArrayList<>(errorListeners)) {
            client.getUnhandledErrorListenable().removeListener(l);
        }
        stateListeners.clear();
        errorListeners.clear();
        elections.closeAll();
    }

    @Override
    public ElectionMember joinElection(String latchPath, String id, Runnable onChange) throws Exception {
        LeaderLatch latch = new LeaderLatch(client, latchPath, id, LeaderLatch.CloseMode.SILENT);
        LeaderLatchListener listener = new LeaderLatchListener() {
            @Override
            public void isLeader() {
                onChange.run();
            }

            @Override
            public void notLeader() {
                onChange.run();
            }
        };
        latch.addListener(listener);
        latch.start();
        return new ElectionMember() {
            @Override
            public String ourPath() {
                return latch.getOurPath();
            }

            @Override
            public boolean hasLeadership() {
                return latch.hasLeadership();
            }

            @Override
            public void leave(boolean withEveryone) {
                latch.removeListener(listener); // a member that left hears no more of its election
                elections.leave(latch, withEveryone);
            }
        };
    }
}
