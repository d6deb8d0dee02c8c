package dev.oncegate.bench;

import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.Stat;

/**
 * The startup phase's second floor: the least that any {@code run -- true} built on the project's
 * fixed choices (a JVM, Curator, a {@link LeaderLatch} per key, a lease whose version fences the
 * writes) must do, as a program of its own: build and start a Curator client, wait for its session,
 * read one znode (the gate reads the namespace's genesis), create the key's scope, win its
 * {@code LeaderLatch}, take the lease (a CAS on the scope), arm (a {@code multi} checking the
 * lease), run {@code true}, record the outcome (a {@code multi} checking the lease), leave the
 * election and end the session. No namespace check, no records' contents, no logging, no zxid
 * marks, no metrics, no result line, no signal handling: a lower bound, not a design.
 * {@link StartupPhase} runs it with the launcher's JVM options for short-lived commands and a
 * class-data sharing archive of its own, beside the floor and {@code oncegate run -- true}.
 *
 * <p>Arguments: the connect string, the base znode (created if missing) and the key's name; exits
 * 0 when every step landed. Not thread-safe (a process's {@code main}).
 */
public final class CuratorMinimum {

    private static final int SESSION_MS = 30_000;
    private static final int CONNECT_MS = 15_000;

    private CuratorMinimum() {
    }

    /**
     * ZooKeeper's client configuration without its {@code zookeeper.ssl.*} copies, which set up the
     * JVM's TLS context for nothing (as the CLI's own configuration avoids it).
     */
    static final class PlainConfig extends ZKClientConfig {
        @Override
        protected void handleBackwardCompatibility() {
            // nothing to copy: the program sets no ZooKeeper system property
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: CuratorMinimum CONNECT BASE KEY");
            System.exit(2);
        }
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(args[0]).sessionTimeoutMs(SESSION_MS)
                .connectionTimeoutMs(CONNECT_MS).retryPolicy(new RetryOneTime(200)).zkClientConfig(new PlainConfig()).build();
        client.start();
        if (!client.blockUntilConnected(CONNECT_MS, TimeUnit.MILLISECONDS)) {
            System.err.println("CuratorMinimum: no session with " + args[0]);
            System.exit(13);
        }
        client.checkExists().forPath(args[1]);
        String scope = args[1] + "/" + args[2] + "/0";
        client.create().creatingParentsIfNeeded().forPath(scope);
        LeaderLatch latch = new LeaderLatch(client, scope + "/latch");
        latch.start();
        if (!latch.await(CONNECT_MS, TimeUnit.MILLISECONDS)) {
            System.err.println("CuratorMinimum: not elected for " + scope);
            System.exit(1);
        }
        Stat lease = client.setData().withVersion(0).forPath(scope, "leased".getBytes());
        client.transaction().forOperations(
                client.transactionOp().check().withVersion(lease.getVersion()).forPath(scope),
                client.transactionOp().create().forPath(scope + "/armed"));
        int exit = new ProcessBuilder("true").redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start().waitFor();
        client.transaction().forOperations(
                client.transactionOp().check().withVersion(lease.getVersion()).forPath(scope),
                client.transactionOp().create().forPath(scope + "/outcome", ("exit " + exit).getBytes()),
                client.transactionOp().setData().withVersion(lease.getVersion()).forPath(scope, "released".getBytes()));
        latch.close();
        close(client);
        System.exit(0);
    }

    /**
     * Ends the session as the CLI does: ZooKeeper's close returns only after its NIO cleanup has
     * slept 100 ms, so it runs on a thread of its own, and this returns once the handle is closed
     * (the server answered closeSession) or that thread ended.
     */
    private static void close(CuratorFramework client) throws Exception {
        ZooKeeper handle = client.getZookeeperClient().getZooKeeper();
        Thread closing = new Thread(client::close, "close");
        closing.setDaemon(true);
        closing.start();
        while (closing.isAlive() && handle.getState() != ZooKeeper.States.CLOSED) {
            closing.join(1);
        }
    }
}
