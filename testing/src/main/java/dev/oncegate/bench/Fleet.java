package dev.oncegate.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.oncegate.Gate;
import dev.oncegate.testing.EmbeddedZooKeeper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * The workers of a run. Each worker has its own Curator client, so its own ZooKeeper session,
 * opened once and reused by every arm and trial (Curator 5.9.0 leaves a thread behind per closed
 * client); its own thread, started before any trial, so that the threads a trial creates are the
 * libraries' own; and a gate per namespace, built on first use.
 *
 * <p>Thread-safe.
 */
final class Fleet implements AutoCloseable {

    /** Session timeout of every worker. */
    static final Duration SESSION = Duration.ofSeconds(15);
    private static final Duration CONNECT = Duration.ofSeconds(30);

    private final List<CuratorFramework> clients;
    private final ThreadPoolExecutor threads;
    private final Map<String, Gate[]> gates = new ConcurrentHashMap<>();

    private Fleet(List<CuratorFramework> clients, ThreadPoolExecutor threads) {
        this.clients = clients;
        this.threads = threads;
    }

    /** Opens {@code size} sessions and starts a thread for each; returns once all are connected. */
    static Fleet open(String connectString, int size) throws InterruptedException {
        AtomicInteger names = new AtomicInteger();
        ThreadPoolExecutor threads = new ThreadPoolExecutor(size, size, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(),
                r -> new Thread(r, "bench-worker-" + names.getAndIncrement()));
        threads.prestartAllCoreThreads();
        Fleet fleet = new Fleet(new ArrayList<>(), threads);
        try {
            for (int i = 0; i < size; i++) {
                fleet.clients.add(EmbeddedZooKeeper.newClient(connectString, SESSION));
            }
            for (CuratorFramework client : fleet.clients) {
                if (!client.blockUntilConnected((int) CONNECT.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("a worker could not connect to " + connectString + " within " + CONNECT);
                }
            }
            return fleet;
        } catch (InterruptedException | RuntimeException e) {
            fleet.close();
            throw e;
        }
    }

    int size() {
        return clients.size();
    }

    /** Worker {@code worker}'s client. */
    CuratorFramework client(int worker) {
        return clients.get(worker);
    }

    /** Worker {@code worker}'s raw ZooKeeper handle (its session). */
    ZooKeeper zookeeper(int worker) {
        try {
            return clients.get(worker).getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw new IllegalStateException("worker " + worker + " has no ZooKeeper handle: " + e, e);
        }
    }

    /** Creates {@code path} and its missing parents as persistent znodes, unless it exists. */
    void ensurePath(String path) throws Exception {
        try {
            clients.get(0).create().creatingParentsIfNeeded().forPath(path);
        } catch (KeeperException.NodeExistsException exists) {
            // made by an earlier arm or phase
        }
    }

    /** Worker {@code worker}'s gate on {@code namespace}, built on first use. */
    Gate gate(int worker, String namespace) {
        Gate[] perWorker = gates.computeIfAbsent(namespace, ns -> new Gate[clients.size()]);
        synchronized (perWorker) {
            if (perWorker[worker] == null) {
                perWorker[worker] = Gate.builder(clients.get(worker)).namespace(namespace)
                        .taskId("bench-worker-" + worker).host("bench").build();
            }
            return perWorker[worker];
        }
    }

    /**
     * Runs {@code body} for workers {@code 0 … n-1}, each on its own thread, all at once, and
     * waits for all of them.
     *
     * @throws IllegalStateException carrying the first failure of a worker
     */
    void onWorkers(int n, WorkerBody body) throws InterruptedException {
        if (n > clients.size()) {
            throw new IllegalArgumentException("n: " + n + " workers asked, the fleet has " + clients.size());
        }
        List<Future<?>> running = new ArrayList<>(n);
        for (int w = 0; w < n; w++) {
            int worker = w;
            running.add(threads.submit(() -> {
                body.run(worker);
                return null;
            }));
        }
        IllegalStateException failure = null;
        for (Future<?> f : running) {
            try {
                f.get();
            } catch (ExecutionException e) {
                if (failure == null) {
                    failure = new IllegalStateException("a worker failed: " + e.getCause(), e.getCause());
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** What one worker does in {@link #onWorkers}. */
    @FunctionalInterface
    interface WorkerBody {
        void run(int worker) throws Exception;
    }

    @Override
    public void close() {
        for (Gate[] perWorker : gates.values()) {
            synchronized (perWorker) {
                for (Gate gate : perWorker) {
                    if (gate != null) {
                        gate.close();
                    }
                }
            }
        }
        try {
            onWorkers(clients.size(), w -> clients.get(w).close()); // at once: each close waits for its session's end
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // closed one by one below
        }
        clients.forEach(CuratorFramework::close); // a no-op for those already closed
        threads.shutdownNow();
        try {
            threads.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
