package dev.oncegate.testing;

import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.apache.curator.test.Compatibility;
import org.apache.zookeeper.MultiOperationRecord;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.proto.CreateRequest;
import org.apache.zookeeper.proto.SetDataRequest;
import org.apache.zookeeper.server.DataNode;
import org.apache.zookeeper.server.NIOServerCnxnFactory;
import org.apache.zookeeper.server.Request;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.apache.zookeeper.server.ZooKeeperServerShutdownHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server connection factory that makes exactly one chosen write ambiguous: the server
 * applies it, then closes the client's connection before the reply leaves, so the client sees
 * ConnectionLoss for a write that happened (the ZooKeeper pitfall "a create or multi can be
 * applied on the server while the client sees ConnectionLoss"). Every other request passes
 * unchanged; the fault switches itself off after one hit.
 *
 * <ul>
 *   <li>{@link #dropNextArmingReply()}: the next {@code multi} that creates {@code …/armed} —
 *       the arming write, which the gate must then treat as armed without invoking the action;</li>
 *   <li>{@link #holdNextArmingRequest()}: the next arming {@code multi} is held before the server
 *       applies it, until the test releases it (the executor's thread waits for the reply meanwhile);
 *       {@link #holdNextSetData(String)} does the same to a {@code setData} (a lease write);</li>
 *   <li>{@link #dropNextMultiDeleting(String)}: the next {@code multi} deleting a path with that
 *       suffix (gc's removal of a key);</li>
 *   <li>{@link #dropNextCreate(String)}: the next plain {@code create} of a path with that suffix;</li>
 *   <li>{@link #dropNextMultiCreating(String)}: the next {@code multi} creating a path with that
 *       suffix (a key creation, or an operator's authorization with its backlog index entry, which a
 *       retried multi must recognise);</li>
 *   <li>{@link #dropNextSetData(String)}: the next {@code setData} on a path with that suffix, alone
 *       or inside a {@code multi} (a lease write on a scope, or the outcome write on
 *       {@code …/armed/outcome}, which the gate retries and must recognise).</li>
 * </ul>
 *
 * <p>Selected with the system property {@code zookeeper.serverCnxnFactory} before a server
 * starts; {@link EmbeddedZooKeeper#startWithAmbiguousWrites()} does that and clears it again.
 * Modelled on Curator's own {@code ChaosMonkeyCnxnFactory}; unlike it, the connection is closed
 * only once the write is applied (ZooKeeper drops queued requests of a closed connection).
 *
 * <p>The fault and counter are static (ZooKeeper instantiates the factory reflectively), so they
 * are shared by every such server in the JVM; thread-safe (atomics). Run one such server at a time.
 */
public final class AmbiguousWriteCnxnFactory extends NIOServerCnxnFactory {

    private static final Logger LOG = LoggerFactory.getLogger(AmbiguousWriteCnxnFactory.class);
    private static final AtomicReference<Fault> FAULT = new AtomicReference<>();
    private static final AtomicInteger DROPPED = new AtomicInteger();
    /** How long to wait for the write to be applied before closing the connection anyway. */
    private static final Duration APPLY_TIMEOUT = Duration.ofSeconds(10);

    private enum Kind { MULTI_CREATE, MULTI_DELETE, CREATE, SET_DATA }

    /** A chosen write: a path ending in {@code suffix}, or (for arming) the scope's armed record {@code …/armed}. */
    private record Fault(Kind kind, String suffix, Hold hold) {
        boolean matches(String path) {
            return suffix == null ? path.endsWith("/armed") : path.endsWith(suffix);
        }
    }

    /**
     * A request held before the server applies it (the connection's later requests wait behind
     * it): {@link #awaitHeld} until it arrived, then {@link #release} to let the server apply it
     * and reply. Its connection's pings wait behind it too, so a hold longer than two thirds of the
     * client's session ends the connection, and Curator may retry the request on a new one: hold
     * requests of a worker with {@link Timing#LONG_SESSION}, and check
     * {@link Worker#connectionInterrupted()} before asserting on what happened. Thread-safe.
     */
    public static final class Hold {
        private final java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        private final java.util.concurrent.CountDownLatch released = new java.util.concurrent.CountDownLatch(1);

        /** Waits until the request arrived at the server (and is being held); false on timeout. */
        public boolean awaitHeld(Duration timeout) throws InterruptedException {
            return held.await(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        }

        /** Lets the server apply the held request and reply. */
        public void release() {
            released.countDown();
        }
    }

    /** Public no-argument constructor, for {@code ServerCnxnFactory.createFactory()}. */
    public AmbiguousWriteCnxnFactory() {
    }

    /** Makes the next arming {@code multi} (one creating {@code …/armed}) lose its reply. */
    public static void dropNextArmingReply() {
        FAULT.set(new Fault(Kind.MULTI_CREATE, null, null));
    }

    /**
     * Holds the next arming {@code multi} before the server applies it, until the returned hold is
     * released; the connection stays up, so the executor waits for its reply.
     */
    public static Hold holdNextArmingRequest() {
        Hold hold = new Hold();
        FAULT.set(new Fault(Kind.MULTI_CREATE, null, hold));
        return hold;
    }

    /**
     * Holds the next {@code setData} on a path ending in {@code suffix}, alone or in a {@code multi}
     * (a lease write on a scope), before the server applies it, until the returned hold is released.
     */
    public static Hold holdNextSetData(String suffix) {
        Hold hold = new Hold();
        FAULT.set(new Fault(Kind.SET_DATA, Objects.requireNonNull(suffix, "suffix"), hold));
        return hold;
    }

    /** Makes the next {@code multi} that creates a path ending in {@code suffix} lose its reply. */
    public static void dropNextMultiCreating(String suffix) {
        FAULT.set(new Fault(Kind.MULTI_CREATE, Objects.requireNonNull(suffix, "suffix"), null));
    }

    /**
     * Makes the next {@code multi} that deletes a path ending in {@code suffix} lose its reply (a
     * retention removal of a key, which a retried multi must recognise as done).
     */
    public static void dropNextMultiDeleting(String suffix) {
        FAULT.set(new Fault(Kind.MULTI_DELETE, Objects.requireNonNull(suffix, "suffix"), null));
    }

    /** Makes the next plain {@code create} of a path ending in {@code suffix} lose its reply. */
    public static void dropNextCreate(String suffix) {
        FAULT.set(new Fault(Kind.CREATE, Objects.requireNonNull(suffix, "suffix"), null));
    }

    /**
     * Makes the next {@code setData} on a path ending in {@code suffix} lose its reply, alone or in a
     * {@code multi} (a lease write; an outcome, {@code "/armed/outcome"}).
     */
    public static void dropNextSetData(String suffix) {
        FAULT.set(new Fault(Kind.SET_DATA, Objects.requireNonNull(suffix, "suffix"), null));
    }

    /** Switches the fault off without waiting for a hit. */
    public static void reset() {
        FAULT.set(null);
    }

    /** Whether a fault is still waiting for its write. */
    public static boolean pending() {
        return FAULT.get() != null;
    }

    /** How many replies were dropped in this JVM so far. */
    public static int dropped() {
        return DROPPED.get();
    }

    @Override
    public void startup(ZooKeeperServer zks, boolean startServer) throws IOException, InterruptedException {
        super.startup(new DroppingServer(zks), startServer);
    }

    /** Wraps the configured server: same data, same session limits; drops one chosen reply. */
    private static final class DroppingServer extends ZooKeeperServer {
        private final ZooKeeperServer wrapped;

        DroppingServer(ZooKeeperServer wrapped) {
            this.wrapped = wrapped;
            setTxnLogFactory(wrapped.getTxnLogFactory());
            setTickTime(wrapped.getTickTime());
            setMinSessionTimeout(wrapped.getMinSessionTimeout());
            setMaxSessionTimeout(wrapped.getMaxSessionTimeout());
        }

        @Override
        public void submitRequest(Request si) {
            Fault fault = FAULT.get();
            // Parse before passing the request on: the pipeline reads (and caches) the same record.
            BooleanSupplier applied = fault == null ? null : match(fault, si);
            if (applied != null && fault.hold() != null) {
                if (FAULT.compareAndSet(fault, null)) {
                    fault.hold().held.countDown();
                    try {
                        if (!fault.hold().released.await(APPLY_TIMEOUT.toMillis() * 6, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                            LOG.warn("a held request was never released; applying it now");
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                super.submitRequest(si);
                return;
            }
            super.submitRequest(si);
            if (applied == null || !FAULT.compareAndSet(fault, null)) {
                return;
            }
            long deadline = System.nanoTime() + APPLY_TIMEOUT.toNanos();
            while (!applied.getAsBoolean() && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            LOG.warn("dropping the reply to {} on {} (applied: {})", Request.op2String(si.type),
                    fault.suffix() == null ? "…/armed" : fault.suffix(), applied.getAsBoolean());
            DROPPED.incrementAndGet();
            Compatibility.serverCnxnClose(si.cnxn);
        }

        /** When the request is the fault's write: a test of whether it is applied; else null. */
        private BooleanSupplier match(Fault fault, Request si) {
            try {
                if (fault.kind() == Kind.MULTI_CREATE && si.type == ZooDefs.OpCode.multi) {
                    MultiOperationRecord multi = si.readRequestRecord(MultiOperationRecord::new);
                    for (Op op : multi) {
                        if ((op.getType() == ZooDefs.OpCode.create || op.getType() == ZooDefs.OpCode.create2)
                                && fault.matches(op.getPath())) {
                            String path = op.getPath();
                            return () -> getZKDatabase().getNode(path) != null;
                        }
                    }
                } else if (fault.kind() == Kind.MULTI_DELETE && si.type == ZooDefs.OpCode.multi) {
                    MultiOperationRecord multi = si.readRequestRecord(MultiOperationRecord::new);
                    for (Op op : multi) {
                        if (op.getType() == ZooDefs.OpCode.delete && fault.matches(op.getPath())) {
                            String path = op.getPath();
                            return () -> getZKDatabase().getNode(path) == null;
                        }
                    }
                } else if (fault.kind() == Kind.CREATE && (si.type == ZooDefs.OpCode.create || si.type == ZooDefs.OpCode.create2)) {
                    CreateRequest create = si.readRequestRecord(CreateRequest::new);
                    if (fault.matches(create.getPath())) {
                        String path = create.getPath();
                        return () -> getZKDatabase().getNode(path) != null;
                    }
                } else if (fault.kind() == Kind.SET_DATA && si.type == ZooDefs.OpCode.setData) {
                    SetDataRequest set = si.readRequestRecord(SetDataRequest::new);
                    if (fault.matches(set.getPath()) && set.getVersion() >= 0) {
                        return versionReached(set.getPath(), set.getVersion() + 1);
                    }
                } else if (fault.kind() == Kind.SET_DATA && si.type == ZooDefs.OpCode.multi) {
                    // The gate's lease writes are multis: check the election node, then setData the scope.
                    MultiOperationRecord multi = si.readRequestRecord(MultiOperationRecord::new);
                    for (Op op : multi) {
                        if (op.getType() == ZooDefs.OpCode.setData && fault.matches(op.getPath())
                                && op.toRequestRecord() instanceof SetDataRequest set && set.getVersion() >= 0) {
                            return versionReached(set.getPath(), set.getVersion() + 1);
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("could not parse a {} request: {}", Request.op2String(si.type), e.toString());
            }
            return null;
        }

        private BooleanSupplier versionReached(String path, int version) {
            return () -> {
                DataNode node = getZKDatabase().getNode(path);
                return node != null && node.stat.getVersion() >= version;
            };
        }

        @Override
        public ZooKeeperServerShutdownHandler getZkShutdownHandler() {
            return wrapped.getZkShutdownHandler();
        }
    }
}
