package dev.oncegate;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;

/**
 * How many ZooKeeper operations per second the model answers on one thread, for a mix shaped like
 * the protocol's (a key's creation multi, lease reads and CAS writes, an arming multi with checks,
 * watched reads, an election node, deletes), per wall second and per CPU second of its thread
 * (the figure that does not depend on what else the machine runs). A measurement, not a test: run its
 * {@code main} on the coordinator's test classpath ({@code [seconds]}, default 5).
 *
 * <p>Not thread-safe; single use.
 */
final class SimZooKeeperThroughput {

    private SimZooKeeperThroughput() {
    }

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 5;
        run(1); // warm-up
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpu = threads.getCurrentThreadCpuTime();
        long[] result = run(seconds);
        double cpuSeconds = (threads.getCurrentThreadCpuTime() - cpu) / 1e9;
        System.out.printf("SimZooKeeper: %,d operations in %d s on one thread (%.2f s of CPU): %,.0f operations/s wall, %,.0f per CPU-second (%,d keys)%n",
                result[0], seconds, cpuSeconds, result[0] / (double) seconds, result[0] / cpuSeconds, result[1]);
    }

    /** Runs the mix for {@code seconds}: {operations, keys}. */
    static long[] run(long seconds) throws Exception {
        AtomicLong clock = new AtomicLong();
        SimZooKeeper server = new SimZooKeeper(clock::incrementAndGet);
        SimClient c = new SimClient(server, "bench").start();
        c.create("/ns/keys", new byte[0], CreateMode.PERSISTENT, null, null, true);
        byte[] lease = "lease".getBytes(UTF_8);
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        long keys = 0;
        while (System.nanoTime() < deadline) {
            for (int batch = 0; batch < 100; batch++, keys++) {
                String key = "/ns/keys/k" + keys;
                c.multi(List.of(c.opCreate(key, new byte[0], CreateMode.PERSISTENT, null),
                        c.opCreate(key + "/0", lease, CreateMode.PERSISTENT, null),
                        c.opCreate(key + "/0/latch", new byte[0], CreateMode.CONTAINER, null)));
                String node = c.create(key + "/0/latch/n-", lease, CreateMode.EPHEMERAL_SEQUENTIAL, null, null, false);
                c.getChildren(key + "/0/latch", null);
                Stat stat = new Stat();
                c.getData(key + "/0", stat, event -> { });
                c.setData(key + "/0", lease, stat.getVersion());
                c.multi(List.of(c.opCheck(key + "/0", stat.getVersion() + 1),
                        c.opCreate(key + "/0/armed", lease, CreateMode.PERSISTENT, null),
                        c.opCreate(key + "/0/armed/outcome", new byte[0], CreateMode.PERSISTENT, null)));
                c.multi(List.of(c.opGetData(key + "/0"), c.opGetData(key + "/0/armed/outcome")));
                c.exists(key + "/0/armed/outcome", null);
                c.delete(node, -1);
                server.runEvents(1_000);
            }
        }
        return new long[] {server.requests(), keys};
    }
}
