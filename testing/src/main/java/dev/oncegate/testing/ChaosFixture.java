package dev.oncegate.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.client.FourLetterWordMain;

/**
 * The ZooKeeper a chaos run talks to: a standalone server or a 3-server ensemble, on 127.0.0.1,
 * with the outages the run injects. Used by one chaos run's injector thread; not thread-safe.
 */
abstract class ChaosFixture implements AutoCloseable {

    abstract String connectString();

    abstract boolean isEnsemble();

    /** Takes the whole service down for {@code down}, then back up with its data. */
    abstract void restart(Duration down) throws Exception;

    /** Kills the ensemble's leader, waits {@code down}, restarts it. */
    abstract void killLeader(Duration down) throws Exception;

    /** Brings back anything a fault left down. */
    abstract void ensureUp();

    @Override
    public abstract void close();

    void initNamespace(String namespace) {
        try (var client = EmbeddedZooKeeper.newClient(connectString(), Duration.ofSeconds(10))) {
            dev.oncegate.Gate.initialize(client, namespace);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while initialising " + namespace, e);
        }
    }

    static ChaosFixture standalone() {
        EmbeddedZooKeeper zk = EmbeddedZooKeeper.start();
        return new ChaosFixture() {
            private boolean down;

            @Override
            String connectString() {
                return zk.connectString();
            }

            @Override
            boolean isEnsemble() {
                return false;
            }

            @Override
            void restart(Duration outage) throws Exception {
                zk.stop();
                down = true;
                Thread.sleep(outage.toMillis());
                zk.restart();
                down = false;
            }

            @Override
            void killLeader(Duration outage) {
                throw new UnsupportedOperationException("a standalone server has no leader to kill");
            }

            @Override
            void ensureUp() {
                if (down) {
                    zk.restart();
                    down = false;
                }
            }

            @Override
            public void close() {
                zk.close();
            }
        };
    }

    static ChaosFixture ensemble() {
        System.setProperty("zookeeper.4lw.commands.whitelist", "srvr,ruok");
        List<InstanceSpec> specs = new ArrayList<>();
        for (int id = 1; id <= 3; id++) {
            specs.add(new InstanceSpec(null, -1, -1, -1, true, id, -1, -1,
                    Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1"));
        }
        TestingCluster cluster = new TestingCluster(specs);
        try {
            cluster.start();
        } catch (Exception e) {
            try {
                cluster.close();
            } catch (java.io.IOException ignored) {
                // already failing
            }
            throw new IllegalStateException("could not start a 3-server ensemble: " + e, e);
        }
        return new ChaosFixture() {
            private final List<InstanceSpec> killed = new ArrayList<>();

            @Override
            String connectString() {
                return cluster.getConnectString();
            }

            @Override
            boolean isEnsemble() {
                return true;
            }

            @Override
            void restart(Duration outage) throws Exception {
                for (InstanceSpec spec : cluster.getInstances()) {
                    if (cluster.killServer(spec)) {
                        killed.add(spec);
                    }
                }
                Thread.sleep(outage.toMillis());
                ensureUp();
            }

            @Override
            void killLeader(Duration outage) throws Exception {
                for (InstanceSpec spec : cluster.getInstances()) {
                    if (isLeader(spec) && cluster.killServer(spec)) {
                        killed.add(spec);
                        Thread.sleep(outage.toMillis());
                        ensureUp();
                        return;
                    }
                }
            }

            @Override
            void ensureUp() {
                for (InstanceSpec spec : new ArrayList<>(killed)) {
                    try {
                        cluster.restartServer(spec);
                        killed.remove(spec);
                    } catch (Exception e) {
                        throw new IllegalStateException("could not restart server " + spec.getServerId() + ": " + e, e);
                    }
                }
            }

            @Override
            public void close() {
                try {
                    cluster.close();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        };
    }

    static boolean isLeader(InstanceSpec spec) {
        try {
            return FourLetterWordMain.send4LetterWord("127.0.0.1", spec.getPort(), "srvr").contains("Mode: leader");
        } catch (Exception e) {
            return false;
        }
    }
}
