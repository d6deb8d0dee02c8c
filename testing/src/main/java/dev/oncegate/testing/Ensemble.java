package dev.oncegate.testing;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingZooKeeperServer;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.apache.zookeeper.common.X509Exception;

/**
 * A real three-server ZooKeeper ensemble for tests (Curator's {@link TestingCluster}), every
 * server bound to 127.0.0.1 on free ports, with throw-away data directories; and the fault a
 * failover scenario needs: {@link #killLeader()}.
 *
 * <p>Start, kill and close are meant for the test thread; {@link #connectString()} and
 * {@link #leader()} may be called from any thread.
 */
public final class Ensemble implements AutoCloseable {

    private final TestingCluster cluster;
    private final java.nio.file.Path scratch;
    private final List<InstanceSpec> killed = new ArrayList<>();

    private Ensemble(TestingCluster cluster, java.nio.file.Path scratch) {
        this.cluster = cluster;
        this.scratch = scratch;
    }

    /**
     * Starts three servers and returns once they serve (a leader is elected). From then on, a
     * server of this process that meets a fatal error (a restarted peer finding its election port
     * still taken, say) logs it instead of calling {@code System.exit}: an in-process test server
     * must never end the test's JVM; the other two keep the quorum.
     */
    public static Ensemble start(Duration timeout) throws InterruptedException {
        org.apache.zookeeper.util.ServiceUtils.setSystemExitProcedure(org.apache.zookeeper.util.ServiceUtils.LOG_ONLY);
        java.nio.file.Path scratch = Scratch.create("oncegate-ensemble-");
        List<InstanceSpec> specs = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            java.nio.file.Path data = Scratch.child(Scratch.child(scratch, "zk-" + i), "data");
            specs.add(new InstanceSpec(data.toFile(), -1, -1, -1, true, i, -1, -1,
                    Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1"));
        }
        TestingCluster cluster = new TestingCluster(specs);
        try {
            cluster.start();
        } catch (Exception e) {
            closeQuietly(cluster);
            Scratch.delete(scratch);
            throw new IllegalStateException("could not start a 3-server ensemble: " + e, e);
        }
        Ensemble ensemble = new Ensemble(cluster, scratch);
        if (!ensemble.awaitLeader(timeout)) {
            ensemble.close();
            throw new IllegalStateException("the ensemble elected no leader within " + timeout);
        }
        return ensemble;
    }

    /** {@code 127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3}. */
    public String connectString() {
        return cluster.getConnectString();
    }

    /** A started client on the whole ensemble (see {@link EmbeddedZooKeeper#newClient(String, Duration)}). */
    public CuratorFramework newClient(Duration sessionTimeout) {
        return EmbeddedZooKeeper.newClient(connectString(), sessionTimeout);
    }

    /** The server that currently leads, if any. */
    public Optional<TestingZooKeeperServer> leader() {
        for (TestingZooKeeperServer server : cluster.getServers()) {
            if ("leader".equals(mode(server.getInstanceSpec().getPort()))) {
                return Optional.of(server);
            }
        }
        return Optional.empty();
    }

    /**
     * Kills the current leader (abruptly, like a crashed process); the two followers elect a
     * new one.
     *
     * @return the killed server's client port
     * @throws IllegalStateException when no server leads
     */
    public int killLeader() {
        TestingZooKeeperServer leader = leader().orElseThrow(() -> new IllegalStateException("no server is leading"));
        InstanceSpec spec = leader.getInstanceSpec();
        try {
            if (!cluster.killServer(spec)) {
                throw new IllegalStateException("could not kill the leader on port " + spec.getPort());
            }
            synchronized (killed) {
                killed.add(spec);
            }
        } catch (IllegalStateException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("could not kill the leader on port " + spec.getPort() + ": " + e, e);
        }
        return spec.getPort();
    }

    /** Kills every server at once (a whole-ensemble outage); {@link #restartKilled()} brings them back. */
    public void killAll() {
        for (InstanceSpec spec : cluster.getInstances()) {
            try {
                if (cluster.killServer(spec)) {
                    synchronized (killed) {
                        killed.add(spec);
                    }
                }
            } catch (Exception e) {
                throw new IllegalStateException("could not kill the server on port " + spec.getPort() + ": " + e, e);
            }
        }
    }

    /** Restarts every server killed by {@link #killLeader()} or {@link #killAll()}, with its data. */
    public void restartKilled() {
        synchronized (killed) {
            for (InstanceSpec spec : new ArrayList<>(killed)) {
                try {
                    cluster.restartServer(spec);
                    killed.remove(spec);
                } catch (Exception e) {
                    throw new IllegalStateException("could not restart the server on port " + spec.getPort() + ": " + e, e);
                }
            }
        }
    }

    /**
     * How many sessions hold a watch on {@code path} on any of the servers right now ({@code wchp}
     * of each; a session watches through the server it is connected to). See
     * {@link EmbeddedZooKeeper#watchingSessions(String)}.
     */
    public int watchingSessions(String path) {
        java.util.Objects.requireNonNull(path, "path");
        return EmbeddedZooKeeper.watchingSessions(cluster.getInstances().stream().map(InstanceSpec::getPort).toList(), path);
    }

    /** Waits until some server leads again (after {@link #killLeader()}, say). */
    public boolean awaitLeader(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (leader().isPresent()) {
                return true;
            }
            Thread.sleep(50);
        }
        return leader().isPresent();
    }

    /** Stops every server and removes their data and directories. */
    @Override
    public void close() {
        Scratch.closeThenDelete(cluster, scratch);
    }

    /**
     * The server's role from the {@code srvr} four-letter command ({@code leader},
     * {@code follower}, {@code standalone}), or null when it does not answer. Curator 5.9's
     * {@code TestingZooKeeperServer} no longer exposes its {@code QuorumPeer}, so the server is asked.
     */
    static String mode(int clientPort) {
        try {
            String reply = FourLetterWordMain.send4LetterWord("127.0.0.1", clientPort, "srvr", false, 2000);
            for (String line : reply.split("\\R")) {
                if (line.startsWith("Mode: ")) {
                    return line.substring("Mode: ".length()).trim();
                }
            }
            return null;
        } catch (IOException | X509Exception.SSLContextException e) {
            return null; // killed, not started, or not serving yet
        }
    }

    private static void closeQuietly(TestingCluster cluster) {
        try {
            cluster.close();
        } catch (IOException ignored) {
            // best effort after a failed start
        }
    }
}
