package dev.oncegate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import dev.oncegate.Gate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.X509Exception;

/**
 * A real standalone ZooKeeper server for tests (Curator's {@link TestingServer}), bound to
 * 127.0.0.1 on a free port, with a throw-away data directory, plus the client helpers every
 * oncegate test needs: a started Curator client with a short session, and namespace
 * initialisation.
 *
 * <p>Thread-safe for the helpers; start, stop and restart are meant for the test thread.
 * The server's tick time is 1000 ms, so sessions are capped at 20 s: ask for short sessions
 * ({@link Timing#SESSION}). For a server whose only client port is TLS, see {@link TlsZooKeeper}.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {

    private final TestingServer server;

    private final java.nio.file.Path scratch;

    private EmbeddedZooKeeper(TestingServer server, java.nio.file.Path scratch) {
        this.server = server;
        this.scratch = scratch;
    }

    /**
     * Starts a standalone server on 127.0.0.1 and a free port; its files go in a private temp
     * directory. An interrupt that arrives meanwhile (a SIGTERM to a demo, say) does not cut the
     * start short: Curator's {@code TestingServer} would give up waiting but leave its server
     * thread starting, writing its data directory after this had removed it. The server is
     * started all the same and the interrupt flag is left set for the caller, who closes it.
     */
    public static EmbeddedZooKeeper start() {
        java.util.concurrent.FutureTask<EmbeddedZooKeeper> starting = new java.util.concurrent.FutureTask<>(
                EmbeddedZooKeeper::startNow);
        Thread starter = new Thread(starting, "oncegate-zk-start");
        starter.setDaemon(true);
        starter.start();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return starting.get();
                } catch (InterruptedException e) {
                    interrupted = true; // the start goes on: wait for it, so nothing is left half-started
                } catch (java.util.concurrent.ExecutionException e) {
                    throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static EmbeddedZooKeeper startNow() {
        java.nio.file.Path scratch = Scratch.create("oncegate-zk-");
        TestingServer server = null;
        try {
            // a port below the ephemeral range, so that no connection takes it while the server is stopped (see Ports)
            InstanceSpec spec = new InstanceSpec(Scratch.child(scratch, "data").toFile(), Ports.pick(Set.of()), -1, -1, true, -1, -1, -1,
                    Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
            server = new TestingServer(spec, false);
            server.start();
            return new EmbeddedZooKeeper(server, scratch);
        } catch (Exception e) {
            if (server != null) {
                try {
                    server.close(); // also removes Curator's config file from the system temp directory
                } catch (IOException | RuntimeException closing) {
                    e.addSuppressed(closing);
                }
            }
            Scratch.delete(scratch);
            throw new IllegalStateException("could not start an embedded ZooKeeper: " + e, e);
        }
    }

    /**
     * Starts a standalone server whose connection factory is {@link AmbiguousWriteCnxnFactory}:
     * after {@link AmbiguousWriteCnxnFactory#dropNextArmingReply()} (say), the next arming multi
     * is applied and its reply lost. The selecting system property is cleared again before this
     * returns, so later servers are ordinary.
     */
    public static EmbeddedZooKeeper startWithAmbiguousWrites() {
        String property = "zookeeper.serverCnxnFactory";
        String previous = System.getProperty(property);
        System.setProperty(property, AmbiguousWriteCnxnFactory.class.getName());
        try {
            AmbiguousWriteCnxnFactory.reset();
            return start();
        } finally {
            if (previous == null) {
                System.clearProperty(property);
            } else {
                System.setProperty(property, previous);
            }
        }
    }

    /** {@code 127.0.0.1:port}. */
    public String connectString() {
        return server.getConnectString();
    }

    /** The underlying Curator test server, for stop/restart. */
    public TestingServer server() {
        return server;
    }

    /**
     * A started client with the given session timeout, Curator's default connection-state
     * error policy, and a short bounded retry (so a stopped server fails fast). The caller closes it.
     */
    public CuratorFramework newClient(Duration sessionTimeout) {
        return newClient(connectString(), sessionTimeout);
    }

    /** {@link #newClient(Duration)} with {@link Timing#SESSION}. */
    public CuratorFramework newClient() {
        return newClient(Timing.SESSION);
    }

    /** A started client for any connect string (an ensemble's, say). */
    public static CuratorFramework newClient(String connectString, Duration sessionTimeout) {
        return newClient(connectString, sessionTimeout, null);
    }

    /**
     * A started client for any connect string with a ZooKeeper client configuration (TLS, say:
     * {@link TlsMaterial#clientConfig()}); {@code null} for ZooKeeper's defaults. The caller closes it.
     */
    public static CuratorFramework newClient(String connectString, Duration sessionTimeout, ZKClientConfig clientConfig) {
        Objects.requireNonNull(connectString, "connectString");
        Objects.requireNonNull(sessionTimeout, "sessionTimeout");
        int session = (int) sessionTimeout.toMillis();
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(session)
                .connectionTimeoutMs(Math.min(session, 3000))
                .retryPolicy(new RetryNTimes(3, 200))
                .zkClientConfig(clientConfig)
                .build();
        client.start();
        return client;
    }

    /** Writes the namespace's genesis record, as {@code oncegate init} does. */
    public void initNamespace(String namespace) {
        initNamespace(newClient(), namespace);
    }

    /** Writes the namespace's genesis record through {@code client}, then closes the client. */
    static void initNamespace(CuratorFramework client, String namespace) {
        try (client) {
            Gate.initialize(client, namespace);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while initialising " + namespace, e);
        }
    }

    /**
     * How many sessions hold a watch on {@code path} right now, from the server's {@code wchp}
     * four-letter command. Lets a test wait until contenders are really blocked on a record
     * (they watch it) before it changes that record, instead of sleeping.
     *
     * @return the number of distinct watching sessions; 0 when none (or the server is down)
     */
    public int watchingSessions(String path) {
        Objects.requireNonNull(path, "path");
        return watchingSessions(List.of(server.getPort()), path);
    }

    /**
     * How many packets the server has received from clients since it started, from its {@code srvr}
     * four-letter command ("Received:"): every request, pings included. A test takes the difference
     * around an operation to learn how many requests it cost, as the server counted them, without
     * timing anything.
     *
     * @throws IllegalStateException when the server does not answer
     */
    public long requestsReceived() {
        String reply;
        try {
            reply = FourLetterWordMain.send4LetterWord("127.0.0.1", server.getPort(), "srvr", false, 5000);
        } catch (IOException | X509Exception.SSLContextException e) {
            throw new IllegalStateException("the embedded ZooKeeper did not answer srvr: " + e, e);
        }
        for (String line : reply.split("\\R")) {
            if (line.startsWith("Received:")) {
                return Long.parseLong(line.substring("Received:".length()).trim());
            }
        }
        throw new IllegalStateException("the embedded ZooKeeper's srvr reply has no 'Received:' line: " + reply);
    }

    /** The distinct sessions watching {@code path} on the servers at these client ports ({@code wchp}). */
    static int watchingSessions(List<Integer> clientPorts, String path) {
        Set<String> sessions = new HashSet<>();
        for (int port : clientPorts) {
            String reply;
            try {
                reply = FourLetterWordMain.send4LetterWord("127.0.0.1", port, "wchp", false, 5000);
            } catch (IOException | X509Exception.SSLContextException e) {
                continue; // down: it holds no watch
            }
            boolean inPath = false;
            for (String line : reply.split("\\R")) {
                if (line.isEmpty()) {
                    continue;
                }
                if (!Character.isWhitespace(line.charAt(0))) {
                    inPath = line.trim().equals(path);
                } else if (inPath) {
                    sessions.add(line.trim());
                }
            }
        }
        return sessions.size();
    }

    /** Stops the server, keeping its data for {@link #restart()}. */
    public void stop() {
        try {
            server.stop();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Restarts a stopped server on the same port with the same data.
     *
     * @throws IllegalStateException when the port is taken meanwhile (checked first: Curator's
     *     server would otherwise fail to bind and end the JVM) or the server does not start
     */
    public void restart() {
        int port = server.getPort();
        if (!Ports.free(port)) {
            throw new IllegalStateException("could not restart the embedded ZooKeeper: port " + port
                    + " on 127.0.0.1 is taken by another process");
        }
        try {
            server.restart();
        } catch (Exception e) {
            throw new IllegalStateException("could not restart the embedded ZooKeeper: " + e, e);
        }
    }

    /** Stops the server and removes its data and its directory. */
    @Override
    public void close() {
        Scratch.closeThenDelete(server, scratch);
    }
}
