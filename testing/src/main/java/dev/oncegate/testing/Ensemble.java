package dev.oncegate.testing;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.QuorumConfigBuilder;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.apache.zookeeper.common.X509Exception;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real three-server ZooKeeper ensemble for tests, every server bound to 127.0.0.1 on free
 * ports below the ephemeral range (see {@link Ports}), with throw-away data directories; and the
 * faults a failover scenario needs: {@link #killLeader()}, {@link #killAll()},
 * {@link #restartKilled()}.
 *
 * <p><b>Why not Curator's {@code TestingCluster}.</b> Its peers are ZooKeeper's
 * {@link ZooKeeperServerEmbedded}, but built without an exit handler, so every (re)start sets the
 * process-wide exit procedure back to {@code System.exit}: a restarted peer that could not bind
 * its port ended the whole test JVM (exit code 2, "The forked VM terminated"). Here every peer is
 * built with {@link ExitHandler#LOG_ONLY}, which its own start installs before its server thread
 * runs; a peer that cannot start stays down, and the two others keep the quorum. The quorum
 * configuration (server lines, {@code myid}, tick and limits) is still Curator's
 * {@link QuorumConfigBuilder}.
 *
 * <p>Start, kill, restart and close are meant for the test thread (they are synchronized, so a
 * helper thread may call them too); {@link #connectString()}, {@link #leaderPort()} and
 * {@link #watchingSessions(String)} may be called from any thread.
 */
public final class Ensemble implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Ensemble.class);
    /** How long a peer's start may take to open its ports (not to finish an election). */
    static final Duration PEER_START = Duration.ofSeconds(30);

    private final QuorumConfigBuilder config;
    private final List<InstanceSpec> specs;
    private final java.nio.file.Path scratch;
    /** The running server of each peer, by index; null while it is down. Guarded by {@code this}. */
    private final ZooKeeperServerEmbedded[] running;

    private Ensemble(QuorumConfigBuilder config, List<InstanceSpec> specs, java.nio.file.Path scratch) {
        this.config = config;
        this.specs = List.copyOf(specs);
        this.scratch = scratch;
        this.running = new ZooKeeperServerEmbedded[specs.size()];
    }

    /**
     * Starts three servers and returns once they serve (a leader is elected).
     *
     * @throws IllegalStateException when a server does not start or no leader is elected within
     *     {@code timeout}; everything started is stopped and removed again (also when interrupted)
     */
    public static Ensemble start(Duration timeout) throws InterruptedException {
        java.nio.file.Path scratch = Scratch.create("oncegate-ensemble-");
        List<InstanceSpec> specs = new ArrayList<>();
        Set<Integer> ports = new HashSet<>();
        try {
            for (int i = 1; i <= 3; i++) {
                java.nio.file.Path data = Scratch.child(Scratch.child(scratch, "zk-" + i), "data");
                int client = pickInto(ports);
                int quorum = pickInto(ports);
                int election = pickInto(ports);
                specs.add(new InstanceSpec(data.toFile(), client, election, quorum, true, i, -1, -1,
                        Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1"));
            }
        } catch (RuntimeException e) {
            Scratch.delete(scratch);
            throw e;
        }
        Ensemble ensemble = new Ensemble(new QuorumConfigBuilder(specs), specs, scratch);
        try {
            synchronized (ensemble) {
                for (int i = 0; i < specs.size(); i++) {
                    ensemble.startPeer(i, PEER_START);
                }
            }
        } catch (RuntimeException e) {
            ensemble.close();
            throw new IllegalStateException("could not start a 3-server ensemble: " + e.getMessage(), e);
        }
        boolean led;
        try {
            led = ensemble.awaitLeader(timeout);
        } catch (InterruptedException e) {
            ensemble.close(); // nothing left running or on disk
            throw e;
        }
        if (!led) {
            ensemble.close();
            throw new IllegalStateException("the ensemble elected no leader within " + timeout);
        }
        return ensemble;
    }

    private static int pickInto(Set<Integer> ports) {
        int port = Ports.pick(ports);
        ports.add(port);
        return port;
    }

    /** {@code 127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3}. */
    public String connectString() {
        return String.join(",", specs.stream().map(s -> "127.0.0.1:" + s.getPort()).toList());
    }

    /** A started client on the whole ensemble (see {@link EmbeddedZooKeeper#newClient(String, Duration)}). */
    public CuratorFramework newClient(Duration sessionTimeout) {
        return EmbeddedZooKeeper.newClient(connectString(), sessionTimeout);
    }

    /** The client port of the server that currently leads, if any answers as leader. */
    public Optional<Integer> leaderPort() {
        for (InstanceSpec spec : specs) {
            if ("leader".equals(mode(spec.getPort()))) {
                return Optional.of(spec.getPort());
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
    public synchronized int killLeader() {
        int port = leaderPort().orElseThrow(() -> new IllegalStateException("no server is leading"));
        for (int i = 0; i < specs.size(); i++) {
            if (specs.get(i).getPort() == port) {
                kill(i);
            }
        }
        return port;
    }

    /** Kills every server at once (a whole-ensemble outage); {@link #restartKilled()} brings them back. */
    public synchronized void killAll() {
        for (int i = 0; i < specs.size(); i++) {
            kill(i);
        }
    }

    /**
     * Restarts every killed server, with its data. A server whose ports are taken meanwhile (by
     * another process) or that fails to start stays down, with a WARN saying why; the others keep
     * the quorum, and a later call tries again.
     *
     * @return the client ports of the servers still down (empty when all serve again)
     */
    public synchronized List<Integer> restartKilled() {
        List<Integer> down = new ArrayList<>();
        for (int i = 0; i < specs.size(); i++) {
            if (running[i] != null) {
                continue;
            }
            InstanceSpec spec = specs.get(i);
            List<Integer> taken = portsOf(spec).stream().filter(p -> !Ports.free(p)).toList();
            if (!taken.isEmpty()) {
                LOG.warn("server {} (client port {}) stays down: its port(s) {} are taken by another process",
                        spec.getServerId(), spec.getPort(), taken);
                down.add(spec.getPort());
                continue;
            }
            try {
                startPeer(i, PEER_START);
            } catch (IllegalStateException e) {
                LOG.warn("server {} (client port {}) stays down: {}", spec.getServerId(), spec.getPort(), e.getMessage());
                down.add(spec.getPort());
            }
        }
        return List.copyOf(down);
    }

    /**
     * How many sessions hold a watch on {@code path} on any of the servers right now ({@code wchp}
     * of each; a session watches through the server it is connected to). See
     * {@link EmbeddedZooKeeper#watchingSessions(String)}.
     */
    public int watchingSessions(String path) {
        java.util.Objects.requireNonNull(path, "path");
        return EmbeddedZooKeeper.watchingSessions(specs.stream().map(InstanceSpec::getPort).toList(), path);
    }

    /** Waits until some server leads again (after {@link #killLeader()}, say). */
    public boolean awaitLeader(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (leaderPort().isPresent()) {
                return true;
            }
            Thread.sleep(50);
        }
        return leaderPort().isPresent();
    }

    /** Stops every server and removes their data and directories. */
    @Override
    public synchronized void close() {
        try {
            for (int i = 0; i < specs.size(); i++) {
                kill(i);
            }
            config.close(); // Curator's scratch config file in the system temp directory
        } finally {
            Scratch.delete(scratch);
        }
    }

    /**
     * Starts the killed server on {@code clientPort} without first checking its ports (the check
     * is {@link #restartKilled()}'s): package-private, so a test can make its bind fail.
     *
     * @throws IllegalStateException when it does not start within {@code timeout}; it is then down
     */
    synchronized void startUnchecked(int clientPort, Duration timeout) {
        for (int i = 0; i < specs.size(); i++) {
            if (specs.get(i).getPort() == clientPort) {
                if (running[i] != null) {
                    throw new IllegalStateException("server on client port " + clientPort + " is running");
                }
                startPeer(i, timeout);
                return;
            }
        }
        throw new IllegalArgumentException("no server of this ensemble has client port " + clientPort);
    }

    /** Starts peer {@code index}; the caller holds the lock. */
    private void startPeer(int index, Duration timeout) {
        InstanceSpec spec = specs.get(index);
        ZooKeeperServerEmbedded server;
        try {
            Properties properties = config.bindInstance(index, spec.getPort()).buildProperties(); // also writes myid
            properties.setProperty("admin.enableServer", "false");
            properties.setProperty("4lw.commands.whitelist", "*");
            server = ZooKeeperServerEmbedded.builder()
                    .configuration(properties)
                    .baseDir(spec.getDataDirectory().toPath().getParent())
                    .exitHandler(ExitHandler.LOG_ONLY)
                    .build();
        } catch (Exception e) {
            throw new IllegalStateException("could not configure server " + spec.getServerId() + ": " + e, e);
        }
        try {
            server.start(timeout.toMillis()); // installs LOG_ONLY before its server thread runs
        } catch (Exception e) {
            server.close(); // the embedded server closes itself on a timeout; on other failures this does
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("server " + spec.getServerId() + " (client port " + spec.getPort()
                    + ") did not start within " + timeout + ": " + e + "; see its log above (a port taken, say)", e);
        }
        running[index] = server;
    }

    private void kill(int index) {
        ZooKeeperServerEmbedded server = running[index];
        if (server != null) {
            running[index] = null;
            server.close();
        }
    }

    private static List<Integer> portsOf(InstanceSpec spec) {
        return List.of(spec.getPort(), spec.getQuorumPort(), spec.getElectionPort());
    }

    /**
     * The server's role from the {@code srvr} four-letter command ({@code leader},
     * {@code follower}, {@code standalone}), or null when it does not answer.
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
}
