package dev.oncegate.bench;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

import dev.oncegate.testing.Scratch;
import org.apache.zookeeper.metrics.MetricsProviderLifeCycleException;
import org.apache.zookeeper.metrics.impl.DefaultMetricsProvider;
import org.apache.zookeeper.server.ContainerManager;
import org.apache.zookeeper.server.DataTree;
import org.apache.zookeeper.server.NIOServerCnxnFactory;
import org.apache.zookeeper.server.ServerMetrics;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.apache.zookeeper.server.persistence.FileTxnSnapLog;

/**
 * The one real ZooKeeper server a benchmark run measures: standalone, in this process, on
 * 127.0.0.1 and a free port, its files in a private temporary directory removed on close (or when
 * the JVM ends first), and
 * <b>fsync on</b> — its transaction log is opened with {@code zookeeper.forceSync=yes} whatever
 * the JVM says, and {@link #sample()} counts the fsyncs, so a run can show they happened.
 *
 * <p>Started with ZooKeeper's own classes rather than Curator's {@code TestingServer}, to put a
 * {@link CountingProcessor} in front of the server's first request processor and to own the
 * container reaper. The reaper's periodic timer ({@code znode.container.checkIntervalMs}) is
 * never started, so reaping cannot add transactions to a timed trial; {@link #reapContainers}
 * runs ZooKeeper's {@link ContainerManager} on demand, as often as it takes.
 *
 * <p>Thread-safe: {@link #sample}, {@link #settle} and the measurements may be called from any
 * thread; {@link #start} and {@link #close} belong to the owner.
 */
final class BenchServer implements AutoCloseable {

    private static final int TICK_MS = 2000;
    private static final String FORCE_SYNC = "zookeeper.forceSync";
    private static final Duration POLL = Duration.ofMillis(20);
    /** The names ZooKeeper gives its server threads ("Connnection", three n's, is its spelling). */
    private static final Pattern SERVER_THREADS = Pattern.compile(
            "NIOServerCxnFactory|NIOWorkerThread|RequestThrottler|ProcessThread|SyncThread|SessionTracker|ConnnectionExpirer");

    private final Path scratch;
    private final FileTxnSnapLog files;
    private final CountingServer server;
    private final NIOServerCnxnFactory connections;
    private final DefaultMetricsProvider metrics;
    private final ContainerManager reaper;
    /** Closes the server when the JVM ends first (Ctrl-C): its directory may hold gigabytes of log. */
    private final Thread onExit = new Thread(this::close, "bench-server-cleanup");
    private final AtomicBoolean closed = new AtomicBoolean();

    private BenchServer(Path scratch, FileTxnSnapLog files, CountingServer server, NIOServerCnxnFactory connections,
                        DefaultMetricsProvider metrics) {
        this.scratch = scratch;
        this.files = files;
        this.server = server;
        this.connections = connections;
        this.metrics = metrics;
        // No wait between deletions (60 000 / maxPerMinute ms); deleting containers never used is off (0).
        this.reaper = new ContainerManager(server.getZKDatabase(), server.counting(), Integer.MAX_VALUE,
                Integer.MAX_VALUE, 0);
        Runtime.getRuntime().addShutdownHook(onExit);
    }

    /** Starts a server; its files go in a new private temporary directory. */
    static BenchServer start() throws IOException, InterruptedException {
        DefaultMetricsProvider metrics = startMetrics();
        Path scratch = Scratch.create("oncegate-bench-zk-");
        FileTxnSnapLog files = null;
        NIOServerCnxnFactory connections = null;
        try {
            files = openWithForceSync(Scratch.child(scratch, "data").toFile());
            CountingServer server = new CountingServer(files);
            connections = new NIOServerCnxnFactory();
            connections.configure(new InetSocketAddress("127.0.0.1", 0), 0, -1, false); // 0: no per-host connection limit
            connections.startup(server);
            return new BenchServer(scratch, files, server, connections, metrics);
        } catch (IOException | InterruptedException | RuntimeException e) {
            if (connections != null) {
                connections.shutdown();
            }
            if (files != null) {
                files.close();
            }
            metrics.stop();
            Scratch.delete(scratch);
            throw e;
        }
    }

    /** ZooKeeper's own metrics (watch notifications, fsyncs), in a provider of this server's. */
    private static DefaultMetricsProvider startMetrics() {
        DefaultMetricsProvider metrics = new DefaultMetricsProvider();
        try {
            metrics.start();
        } catch (MetricsProviderLifeCycleException e) {
            throw new IllegalStateException("could not start ZooKeeper's metrics: " + e, e);
        }
        ServerMetrics.metricsProviderInitialized(metrics);
        return metrics;
    }

    /** The transaction log reads {@code zookeeper.forceSync} when it is created: make it "yes" just then. */
    private static FileTxnSnapLog openWithForceSync(File dir) throws IOException {
        synchronized (System.getProperties()) {
            String previous = System.getProperty(FORCE_SYNC);
            System.setProperty(FORCE_SYNC, "yes");
            try {
                return new FileTxnSnapLog(dir, dir);
            } finally {
                if (previous == null) {
                    System.clearProperty(FORCE_SYNC);
                } else {
                    System.setProperty(FORCE_SYNC, previous);
                }
            }
        }
    }

    /** {@code 127.0.0.1:port}. */
    String connectString() {
        return "127.0.0.1:" + connections.getLocalPort();
    }

    /** The directory holding the server's transaction log and snapshots. */
    Path dataDir() {
        return files.getDataLogDir().toPath();
    }

    /** The server's counters now. */
    ServerSample sample() {
        Map<String, Long> values = metricValues();
        long watches = values.getOrDefault("sum_node_created_watch_count", 0L)
                + values.getOrDefault("sum_node_deleted_watch_count", 0L)
                + values.getOrDefault("sum_node_changed_watch_count", 0L)
                + values.getOrDefault("sum_node_children_watch_count", 0L);
        return new ServerSample(server.getLastProcessedZxid(), server.counting().counts(), watches,
                values.getOrDefault("cnt_fsynctime", 0L), ManagementFactory.getThreadMXBean().getTotalStartedThreadCount(),
                server.counting().operations(), serverCpuNanos(),
                ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime());
    }

    /**
     * CPU time of the server's threads, known by the names ZooKeeper gives them: the NIO
     * connection factory's selector, accept and worker threads, the request throttler, the
     * pipeline's {@code ProcessThread} (PrepRequestProcessor) and {@code SyncThread} (log, fsync,
     * and the final processor that applies each transaction), and the session tracker. They live
     * as long as the server, so a difference of two sums is what the server spent between them.
     * Snapshots are not in it: ZooKeeper writes each on a thread of its own ("Snapshot Thread")
     * that ends with it, so its CPU time is counted only in the process's total.
     */
    static long serverCpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && SERVER_THREADS.matcher(t.getThreadName()).lookingAt()) {
                sum += Math.max(0, threads.getThreadCpuTime(t.getThreadId()));
            }
        }
        return sum;
    }

    private Map<String, Long> metricValues() {
        Map<String, Long> values = new HashMap<>();
        metrics.dump((name, value) -> {
            if (value instanceof Number n) {
                values.put(name, n.longValue());
            }
        });
        return values;
    }

    /**
     * Waits until the server has been idle (no request but pings, no transaction) for
     * {@code quiet}, or {@code atMost} passed: what clients do in the background after a trial
     * (a latch node deleted after its close, say) is then counted in that trial, not the next.
     *
     * @return whether the server went quiet
     */
    boolean settle(Duration quiet, Duration atMost) throws InterruptedException {
        long deadline = System.nanoTime() + atMost.toNanos();
        long lastZxid = server.getLastProcessedZxid();
        long lastRequests = server.counting().workRequests();
        long quietSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            Thread.sleep(POLL.toMillis());
            long zxid = server.getLastProcessedZxid();
            long requests = server.counting().workRequests();
            if (zxid != lastZxid || requests != lastRequests) {
                lastZxid = zxid;
                lastRequests = requests;
                quietSince = System.nanoTime();
            } else if (System.nanoTime() - quietSince >= quiet.toNanos()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Deletes every empty container that once had children, as ZooKeeper's reaper does, and
     * repeats until none is left (a parent container empties when its last child goes).
     *
     * @return how many containers were deleted
     */
    long reapContainers() throws InterruptedException {
        long before = server.getZKDatabase().getNodeCount();
        for (int round = 0; round < 20 && reapable() > 0; round++) {
            reaper.checkContainers();
            settle(TrialRunner.QUIET, Duration.ofMinutes(5));
        }
        return before - server.getZKDatabase().getNodeCount();
    }

    private long reapable() {
        DataTree tree = server.getZKDatabase().getDataTree();
        return tree.getContainers().stream().map(tree::getNode)
                .filter(n -> n != null && n.stat.getCversion() > 0 && n.getChildren().isEmpty()).count();
    }

    /**
     * The server's footprint now: znodes, their path and data bytes, the JVM's heap in use after
     * full garbage collections (the clients of this process included: they hold nothing per key),
     * and the size of a snapshot written now.
     */
    Footprint footprint() throws IOException, InterruptedException {
        File snapshot = server.takeSnapshot(true);
        long snapshotBytes = snapshot.length();
        Files.deleteIfExists(snapshot.toPath()); // measured; this server is never restarted from it
        DataTree tree = server.getZKDatabase().getDataTree();
        return new Footprint(tree.getNodeCount(), tree.approximateDataSize(), heapAfterGc(), snapshotBytes);
    }

    /**
     * A server's footprint; immutable.
     *
     * @param znodes        znodes in the tree
     * @param dataBytes     ZooKeeper's approximate data size: path and data bytes of every znode
     * @param heapBytes     JVM heap in use after full collections
     * @param snapshotBytes size of a snapshot file written now
     */
    record Footprint(long znodes, long dataBytes, long heapBytes, long snapshotBytes) {
    }

    private static long heapAfterGc() throws InterruptedException {
        var memory = ManagementFactory.getMemoryMXBean();
        long last = Long.MAX_VALUE;
        for (int i = 0; i < 6; i++) {
            System.gc();
            Thread.sleep(100);
            long used = memory.getHeapMemoryUsage().getUsed();
            if (Math.abs(last - used) < 256 * 1024) {
                return used;
            }
            last = used;
        }
        return last;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (Thread.currentThread() != onExit) {
            try {
                Runtime.getRuntime().removeShutdownHook(onExit);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway and finds the server closed
            }
        }
        try {
            reaper.stop();
            connections.shutdown();
            if (server.isRunning()) {
                server.shutdown();
            }
            files.close();
        } catch (IOException e) {
            // the directory goes anyway
        } finally {
            metrics.stop();
            Scratch.delete(scratch);
        }
    }

    /** A standalone server whose pipeline starts with a {@link CountingProcessor}. */
    private static final class CountingServer extends ZooKeeperServer {
        private volatile CountingProcessor counting;

        CountingServer(FileTxnSnapLog files) {
            super(files, TICK_MS, -1, -1, -1, null, "");
        }

        @Override
        protected void setupRequestProcessors() {
            super.setupRequestProcessors();
            counting = new CountingProcessor(firstProcessor);
            firstProcessor = counting;
        }

        CountingProcessor counting() {
            return counting;
        }
    }
}
