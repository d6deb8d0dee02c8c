package dev.oncegate;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gate: configuration shared by its attempts, the namespace's state (genesis, ACLs,
 * rollback witness: {@link NamespaceState}), its {@link Operator}, and one connection-state
 * listener and one unhandled-error listener on the client ({@link ZooKeeperOps#listen}), which fan out
 * to the live attempts (they only wake the attempts' owner threads).
 *
 * <p>Thread-safe: the set of live attempts is concurrent; the namespace state is thread-safe.
 */
final class DefaultGate implements Gate {

    private static final Logger LOG = LoggerFactory.getLogger(DefaultGate.class);

    final ZooKeeperOps zk;
    final NamespaceState ns;
    final ScopeProtocol protocol;
    final GateMetrics metrics;
    final Clock clock;
    final Duration leaseTtl;
    final Duration connectTimeout;
    final String taskId;
    final String host;
    final long pid;

    private final Operator operator;
    private final Set<DefaultAttempt> live = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();

    DefaultGate(ZooKeeperOps zk, String namespace, MeterRegistry registry, Clock clock, Duration leaseTtl,
                Duration connectTimeout, String taskId, String host, long pid, boolean initializeNamespace,
                ZxidMarks marks) {
        this.zk = zk;
        this.clock = clock;
        this.leaseTtl = leaseTtl;
        this.connectTimeout = connectTimeout;
        this.taskId = taskId;
        this.host = host;
        this.pid = pid;
        this.ns = new NamespaceState(zk, namespace, clock, marks, initializeNamespace);
        this.protocol = ns.protocol;
        this.operator = new DefaultOperator(ns, host);
        this.metrics = new GateMetrics(registry, namespace, zk::connected);
        zk.listen(this::onConnectionState, this::onUnhandledError);
    }

    @Override
    public Attempt enter(EffectKey key, Duration wait) throws InterruptedException {
        Objects.requireNonNull(key, "key");
        BuilderChecks.atLeast("wait", wait, Duration.ZERO);
        if (closed.get()) {
            throw new IllegalStateException("gate: closed; build a new gate");
        }
        DefaultAttempt attempt = new DefaultAttempt(this, key);
        live.add(attempt);
        try (LogContext ignored = LogContext.of(key, -1, taskId)) {
            attempt.enter(wait);
        } catch (InterruptedException | RuntimeException | Error e) {
            attempt.close();
            throw e;
        }
        return attempt;
    }

    void forget(DefaultAttempt attempt) {
        live.remove(attempt);
    }

    /** How many of this gate's attempts are live (entered, not closed yet): a closed attempt is forgotten. */
    int liveAttempts() {
        return live.size();
    }

    /** Whether a live attempt of this gate watches {@code path} (the client's watches are shared by all of them). */
    boolean watchedByAnAttempt(String path) {
        for (DefaultAttempt attempt : live) {
            if (attempt.watches(path)) {
                return true;
            }
        }
        return false;
    }

    boolean isClosed() {
        return closed.get();
    }

    @Override
    public KeyHistory inspect(String key) throws InterruptedException {
        return operator.inspect(key);
    }

    @Override
    public Operator operator() {
        return operator;
    }

    @Override
    public String namespace() {
        return ns.namespace;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            zk.close();
            metrics.close();
            ns.flushMarks();
        }
    }

    private void onConnectionState(ConnectionState state) {
        metrics.connectionState(state);
        try (LogContext ignored = LogContext.ofTask(taskId)) {
            if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                LOG.warn("oncegate namespace {}: ZooKeeper connection {}; executors without a confirmed revalidation"
                        + " will stop", ns.namespace, state);
            } else {
                LOG.info("oncegate namespace {}: ZooKeeper connection {}", ns.namespace, state);
            }
        }
        for (DefaultAttempt attempt : live) {
            attempt.onConnectionState(state);
        }
    }

    private void onUnhandledError(String message, Throwable error) {
        String path = error instanceof KeeperException ke ? ke.getPath() : null;
        boolean routed = false;
        for (DefaultAttempt attempt : live) {
            if (path != null && attempt.concerns(path)) {
                attempt.onBackgroundError(error);
                routed = true;
            }
        }
        if (!routed) {
            try (LogContext ignored = LogContext.ofTask(taskId)) {
                LOG.warn("oncegate namespace {}: unhandled Curator error not tied to a live attempt: {}", ns.namespace,
                        message, error);
            }
        }
    }
}
