package dev.oncegate.testing;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.test.Compatibility;
import org.apache.zookeeper.MultiOperationRecord;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.server.NIOServerCnxnFactory;
import org.apache.zookeeper.server.Request;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.apache.zookeeper.server.ZooKeeperServerShutdownHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server connection factory that makes exactly one arming write ambiguous: when
 * {@linkplain #dropNextArmingReply() switched on}, the next {@code multi} that creates a path
 * ending in {@code /armed} is applied by the server, and then the client's connection is closed
 * before the reply leaves, so the client sees ConnectionLoss for a write that happened. Every
 * other request passes unchanged; the switch turns itself off after one hit.
 *
 * <p>Selected with the system property {@code zookeeper.serverCnxnFactory} before a server
 * starts; {@link EmbeddedZooKeeper#startWithAmbiguousArming()} does that and clears it again.
 * Modelled on Curator's own {@code ChaosMonkeyCnxnFactory}.
 *
 * <p>The switch and counter are static (ZooKeeper instantiates the factory reflectively), so
 * they are shared by every such server in the JVM; thread-safe (atomics). Run one such server
 * at a time.
 */
public final class AmbiguousArmingCnxnFactory extends NIOServerCnxnFactory {

    private static final Logger LOG = LoggerFactory.getLogger(AmbiguousArmingCnxnFactory.class);
    private static final AtomicBoolean ENABLED = new AtomicBoolean();
    private static final AtomicInteger DROPPED = new AtomicInteger();
    /** How long to wait for the arming multi to be applied before closing the connection. */
    private static final Duration APPLY_TIMEOUT = Duration.ofSeconds(10);

    /** Public no-argument constructor, for {@code ServerCnxnFactory.createFactory()}. */
    public AmbiguousArmingCnxnFactory() {
    }

    /** Makes the next arming {@code multi} (and only that one) lose its reply. */
    public static void dropNextArmingReply() {
        ENABLED.set(true);
    }

    /** Switches the fault off without waiting for a hit. */
    public static void reset() {
        ENABLED.set(false);
    }

    /** Whether the switch is still on (no arming multi seen since {@link #dropNextArmingReply()}). */
    public static boolean pending() {
        return ENABLED.get();
    }

    /** How many arming replies were dropped in this JVM so far. */
    public static int dropped() {
        return DROPPED.get();
    }

    @Override
    public void startup(ZooKeeperServer zks, boolean startServer) throws IOException, InterruptedException {
        super.startup(new DroppingServer(zks), startServer);
    }

    /** Wraps the configured server: same data, same session limits; drops one arming reply. */
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
            String armedPath = si.type == ZooDefs.OpCode.multi && ENABLED.get() ? armedPathOf(si) : null;
            super.submitRequest(si);
            if (armedPath == null || !ENABLED.compareAndSet(true, false)) {
                return;
            }
            // The request pipeline drops requests of a closed connection, so wait until the
            // multi is applied, then close: the write happened, its reply never leaves.
            long deadline = System.nanoTime() + APPLY_TIMEOUT.toNanos();
            while (getZKDatabase().getNode(armedPath) == null && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            boolean applied = getZKDatabase().getNode(armedPath) != null;
            LOG.warn("dropping the reply to the arming multi on {} (applied: {})", armedPath, applied);
            DROPPED.incrementAndGet();
            Compatibility.serverCnxnClose(si.cnxn);
        }

        /** The {@code .../armed} path a multi creates, or null. Parsed before the pipeline reads it. */
        private static String armedPathOf(Request si) {
            try {
                MultiOperationRecord multi = si.readRequestRecord(MultiOperationRecord::new);
                for (Op op : multi) {
                    if ((op.getType() == ZooDefs.OpCode.create || op.getType() == ZooDefs.OpCode.create2)
                            && op.getPath().endsWith("/armed")) {
                        return op.getPath();
                    }
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("could not parse a multi request: {}", e.toString());
            }
            return null;
        }

        @Override
        public ZooKeeperServerShutdownHandler getZkShutdownHandler() {
            return wrapped.getZkShutdownHandler();
        }
    }
}
