package dev.oncegate.bench;

import java.nio.charset.StandardCharsets;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * The two-write floor: the least any write-ahead gate must do. {@code create key ARMED} (the
 * contender whose create succeeds is the executor, and the record exists before the action
 * runs), the action, then {@code setData key DONE} on version 0. No election, no lease, no
 * fencing, no namespace check: a lower bound, not a design.
 *
 * <p>Thread-safe.
 *
 * @param base the znode under which the effects' records go
 */
record FloorArm(Fleet fleet, String base) implements Arm {

    private static final byte[] ARMED = "ARMED".getBytes(StandardCharsets.UTF_8);
    private static final byte[] DONE = "DONE".getBytes(StandardCharsets.UTF_8);

    @Override
    public String name() {
        return "floor";
    }

    @Override
    public boolean runs(Workload workload) {
        return workload.shape() == Workload.Shape.NEW_KEYS;
    }

    @Override
    public void prepare(int workers) throws Exception {
        fleet.ensurePath(base);
    }

    @Override
    public Verdict attempt(int worker, String key, Ledger ledger) throws KeeperException, InterruptedException {
        ZooKeeper zk = fleet.zookeeper(worker);
        String path = base + "/" + key;
        try {
            zk.create(path, ARMED, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException taken) {
            return Verdict.STOPPED;
        }
        ledger.execute(key);
        zk.setData(path, DONE, 0);
        return Verdict.EXECUTED;
    }
}
