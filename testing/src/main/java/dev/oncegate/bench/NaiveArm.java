package dev.oncegate.bench;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * The naive Curator gate a user would write first: take Curator's {@link InterProcessMutex} on
 * the key, check a "done" marker with {@code exists}, and when it is absent run the action and
 * {@code create} the marker; release the lock. One permanent znode per effect (the marker); the
 * lock's container parent is reaped by the server. No write-ahead record, no fencing: an
 * executor that loses its session mid-action is not stopped.
 *
 * <p>Thread-safe: each attempt makes its own mutex on the worker's own client.
 *
 * @param base the znode under which the locks and the markers go
 */
record NaiveArm(Fleet fleet, String base) implements Arm {

    /** How long a contender waits for the lock. */
    static final Duration LOCK_WAIT = Duration.ofSeconds(60);

    @Override
    public String name() {
        return "naive";
    }

    @Override
    public void prepare(int workers) throws Exception {
        fleet.ensurePath(base + "/done");
    }

    @Override
    public Verdict attempt(int worker, String key, Ledger ledger) throws Exception {
        CuratorFramework client = fleet.client(worker);
        InterProcessMutex lock = new InterProcessMutex(client, base + "/locks/" + key);
        if (!lock.acquire(LOCK_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            return Verdict.UNDECIDED;
        }
        try {
            String done = base + "/done/" + key;
            if (client.checkExists().forPath(done) != null) {
                return Verdict.STOPPED;
            }
            ledger.execute(key);
            client.create().forPath(done);
            return Verdict.EXECUTED;
        } finally {
            lock.release();
        }
    }
}
