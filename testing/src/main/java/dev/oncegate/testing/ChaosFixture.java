package dev.oncegate.testing;

import java.time.Duration;

/**
 * The ZooKeeper a chaos run talks to — an {@link EmbeddedZooKeeper} or an {@link Ensemble} —
 * with the outages the run injects. Used by one chaos run's injector thread; not thread-safe.
 */
abstract class ChaosFixture implements AutoCloseable {

    private final String connectString;
    private final boolean ensemble;

    /** {@code connectString} stays the same across the outages: a server comes back on its own port. */
    private ChaosFixture(String connectString, boolean ensemble) {
        this.connectString = connectString;
        this.ensemble = ensemble;
    }

    final String connectString() {
        return connectString;
    }

    final boolean isEnsemble() {
        return ensemble;
    }

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
        return new ChaosFixture(zk.connectString(), false) {
            private boolean down;

            @Override
            void restart(Duration outage) throws Exception {
                zk.stop();
                down = true;
                Thread.sleep(outage.toMillis());
                ensureUp();
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

    static ChaosFixture ensemble() throws InterruptedException {
        Ensemble ensemble = Ensemble.start(Duration.ofSeconds(60));
        return new ChaosFixture(ensemble.connectString(), true) {
            @Override
            void restart(Duration outage) throws Exception {
                ensemble.killAll();
                Thread.sleep(outage.toMillis());
                ensureUp();
            }

            @Override
            void killLeader(Duration outage) throws Exception {
                if (ensemble.leaderPort().isEmpty()) {
                    return; // mid-election: nothing to kill right now
                }
                ensemble.killLeader();
                Thread.sleep(outage.toMillis());
                ensureUp();
            }

            @Override
            void ensureUp() {
                ensemble.restartKilled(); // a server whose port was taken stays down: the other two keep the quorum
            }

            @Override
            public void close() {
                ensemble.close();
            }
        };
    }
}
