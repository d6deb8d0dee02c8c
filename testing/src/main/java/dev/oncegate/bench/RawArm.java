package dev.oncegate.bench;

import java.util.concurrent.Semaphore;

import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * Raw ZooKeeper, the ceiling: one {@code create} per effect on the worker's own session; the
 * contender whose create succeeds runs the action, NodeExists means someone did. A late
 * contender reads instead ({@code exists}). Synchronous, or pipelined with a window of
 * requests in flight per session. Nothing here survives a lost reply or records an outcome.
 *
 * <p>Thread-safe.
 *
 * @param base   the znode under which the effects' znodes go
 * @param window requests in flight per session; 0 for synchronous requests
 */
record RawArm(Fleet fleet, String base, int window) implements Arm {

    private static final byte[] DATA = new byte[0];

    /** One synchronous create per effect. */
    static RawArm sync(Fleet fleet, String base) {
        return new RawArm(fleet, base, 0);
    }

    /** Asynchronous creates, {@code window} in flight per session. */
    static RawArm async(Fleet fleet, String base, int window) {
        return new RawArm(fleet, base, window);
    }

    @Override
    public String name() {
        return window == 0 ? "raw" : "raw_async" + window;
    }

    @Override
    public boolean runs(Workload workload) {
        Workload.Shape shape = workload.shape();
        return shape == Workload.Shape.NEW_KEYS || (shape == Workload.Shape.CONSUMED && window == 0);
    }

    @Override
    public void prepare(int workers) throws Exception {
        fleet.ensurePath(base);
    }

    @Override
    public Verdict attempt(int worker, String key, Ledger ledger) throws KeeperException, InterruptedException {
        try {
            fleet.zookeeper(worker).create(base + "/" + key, DATA, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException taken) {
            return Verdict.STOPPED;
        }
        ledger.execute(key);
        return Verdict.EXECUTED;
    }

    @Override
    public Verdict lateAttempt(int worker, String key, Ledger ledger) throws KeeperException, InterruptedException {
        return fleet.zookeeper(worker).exists(base + "/" + key, false) != null ? Verdict.STOPPED : attempt(worker, key, ledger);
    }

    @Override
    public void stream(int worker, KeySource keys, Ledger ledger, Tally tally) throws InterruptedException {
        if (window == 0) {
            Arm.super.stream(worker, keys, ledger, tally);
            return;
        }
        ZooKeeper zk = fleet.zookeeper(worker);
        Semaphore inFlight = new Semaphore(window);
        for (String key = keys.next(); key != null; key = keys.next()) {
            inFlight.acquire();
            long started = System.nanoTime();
            String effect = key;
            // The callbacks of one session run on its one event thread: the tally has one writer.
            AsyncCallback.StringCallback done = (rc, path, ctx, name) -> {
                KeeperException.Code code = KeeperException.Code.get(rc);
                if (code == KeeperException.Code.OK) {
                    ledger.execute(effect);
                    tally.record(Verdict.EXECUTED, System.nanoTime() - started);
                } else if (code == KeeperException.Code.NODEEXISTS) {
                    tally.record(Verdict.STOPPED, System.nanoTime() - started);
                } else {
                    tally.error(KeeperException.create(code, path));
                }
                inFlight.release();
            };
            zk.create(base + "/" + key, DATA, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, done, null);
        }
        inFlight.acquire(window); // every reply is in
    }
}
