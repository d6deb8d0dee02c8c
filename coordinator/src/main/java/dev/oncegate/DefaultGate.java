package dev.oncegate;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.UnhandledErrorListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gate: configuration shared by its attempts, the namespace's remembered genesis id, and
 * one connection-state listener and one unhandled-error listener on the caller's client, which
 * fan out to the live attempts (they only wake the attempts' owner threads).
 *
 * <p>Thread-safe: the set of live attempts is concurrent, the genesis id an atomic reference.
 */
final class DefaultGate implements Gate {

    private static final Logger LOG = LoggerFactory.getLogger(DefaultGate.class);

    final CuratorFramework client;
    final ScopeProtocol protocol;
    final GateMetrics metrics;
    final Clock clock;
    final Duration leaseTtl;
    final Duration connectTimeout;
    final String taskId;
    final String host;
    final long pid;
    final boolean initializeNamespace;

    private final String namespace;
    private final AtomicReference<String> genesisId = new AtomicReference<>();
    private final Set<DefaultAttempt> live = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ConnectionStateListener connectionListener = this::onConnectionState;
    private final UnhandledErrorListener errorListener = this::onUnhandledError;

    DefaultGate(CuratorFramework client, String namespace, MeterRegistry registry, Clock clock, Duration leaseTtl,
                Duration connectTimeout, String taskId, String host, long pid, boolean initializeNamespace) {
        this.client = client;
        this.namespace = namespace;
        this.clock = clock;
        this.leaseTtl = leaseTtl;
        this.connectTimeout = connectTimeout;
        this.taskId = taskId;
        this.host = host;
        this.pid = pid;
        this.initializeNamespace = initializeNamespace;
        this.protocol = new ScopeProtocol(client, namespace, clock);
        this.metrics = new GateMetrics(registry, namespace, () -> client.getZookeeperClient().isConnected());
        client.getConnectionStateListenable().addListener(connectionListener);
        client.getUnhandledErrorListenable().addListener(errorListener);
        LOG.info("oncegate gate on namespace {} [task={}]: no ACLs configured by oncegate; any client that can reach"
                + " the ensemble may rewrite the records (fine for single-team development only)", namespace, taskId);
    }

    @Override
    public Attempt enter(EffectKey key, Duration wait) throws InterruptedException {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait: must not be negative, got " + wait);
        }
        if (closed.get()) {
            throw new IllegalStateException("gate: closed; build a new gate");
        }
        DefaultAttempt attempt = new DefaultAttempt(this, key);
        live.add(attempt);
        try {
            attempt.enter(wait);
        } catch (InterruptedException | RuntimeException | Error e) {
            attempt.close();
            throw e;
        }
        return attempt;
    }

    /**
     * Checks the namespace's genesis: present (or created, when the builder allows it), and the
     * same as the first one this gate saw. Returns null when fine, else the stop.
     */
    Decision.Stop checkGenesis() throws Exception {
        var genesis = protocol.readGenesis();
        if (genesis.isEmpty() && initializeNamespace) {
            genesis = java.util.Optional.of(protocol.createGenesis().genesis());
        }
        String path = Layout.genesis(namespace);
        if (genesis.isEmpty()) {
            return new Decision.StopUnavailable(StopReason.NAMESPACE_NOT_INITIALISED, Evidence.of(path, -1,
                    "namespace " + namespace + " has no genesis record: if this is a new namespace run `oncegate init"
                            + " --namespace " + namespace + "`; if it held keys before, its data was lost or restored"
                            + " from an old snapshot and must not be taken for a fresh start"));
        }
        String seen = genesis.get().id();
        if (!genesisId.compareAndSet(null, seen) && !genesisId.get().equals(seen)) {
            return new Decision.StopUnavailable(StopReason.NAMESPACE_REPLACED, Evidence.of(path, -1,
                    "namespace " + namespace + " now has genesis " + seen + " but this gate started with "
                            + genesisId.get() + ": its data was replaced; restart the worker after an operator checked it"));
        }
        return null;
    }

    void forget(DefaultAttempt attempt) {
        live.remove(attempt);
    }

    @Override
    public KeyHistory inspect(String key) throws InterruptedException {
        EffectKey.requireKeyText(key);
        String keyPath = Layout.keyPath(namespace, key);
        try {
            byte[] keyData;
            try {
                keyData = client.getData().forPath(keyPath);
            } catch (KeeperException.NoNodeException e) {
                return new KeyHistory(key, keyPath, false, null, "absent", List.of(), List.of());
            }
            Map<String, Object> record = Records.tree(keyPath, keyData);
            int latest = protocol.latestScope(keyPath);
            List<KeyHistory.ScopeHistory> scopes = new ArrayList<>();
            Map<String, Integer> usedBy = new java.util.HashMap<>();
            for (int n = 0; n <= latest; n++) {
                Map<String, byte[]> raw = new java.util.HashMap<>();
                ScopeView view;
                try {
                    view = protocol.readScope(keyPath, n, null, raw);
                } catch (KeeperException.NoNodeException gap) {
                    throw new UnreadableRecordException(Layout.scope(keyPath, n), "scope " + n + " is missing below scope " + latest);
                }
                usedBy.put(view.data().opened(), n);
                String scopePath = view.path();
                Map<String, Object> data = Records.tree(scopePath, raw.get(scopePath));
                Map<String, Object> armed = view.armed() == null ? null
                        : Records.tree(Layout.armed(scopePath), raw.get(Layout.armed(scopePath)));
                Map<String, Object> outcome = view.outcome() == null ? null
                        : Records.tree(Layout.outcome(scopePath), raw.get(Layout.outcome(scopePath)));
                scopes.add(new KeyHistory.ScopeHistory(n, stateName(view), view.version(), view.mzxid(), data, armed, outcome));
            }
            String authPath = Layout.authorizations(keyPath);
            List<String> names = new ArrayList<>(client.getChildren().forPath(authPath));
            names.sort(null);
            List<KeyHistory.AuthorizationRecord> auths = new ArrayList<>();
            for (String name : names) {
                String p = authPath + "/" + name;
                auths.add(new KeyHistory.AuthorizationRecord(name,
                        Records.decodeAuthorization(p, client.getData().forPath(p)), usedBy.getOrDefault(name, -1)));
            }
            return new KeyHistory(key, keyPath, true, record, scopes.get(scopes.size() - 1).state(), List.copyOf(scopes),
                    List.copyOf(auths));
        } catch (InterruptedException e) {
            throw e;
        } catch (OncegateException e) {
            throw e;
        } catch (Exception e) {
            throw new OncegateException("could not read key " + keyPath + ": " + e
                    + " (check that ZooKeeper is reachable and this identity may read the namespace)", e);
        }
    }

    private static String stateName(ScopeView view) {
        return view.state().name().toLowerCase();
    }

    @Override
    public String namespace() {
        return namespace;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            client.getConnectionStateListenable().removeListener(connectionListener);
            client.getUnhandledErrorListenable().removeListener(errorListener);
            metrics.close();
        }
    }

    private void onConnectionState(CuratorFramework c, ConnectionState state) {
        metrics.connectionState(state);
        if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
            LOG.warn("oncegate namespace {} [task={}]: ZooKeeper connection {}; executors without a confirmed"
                    + " revalidation will stop", namespace, taskId, state);
        } else {
            LOG.info("oncegate namespace {} [task={}]: ZooKeeper connection {}", namespace, taskId, state);
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
            LOG.warn("oncegate namespace {} [task={}]: unhandled Curator error not tied to a live attempt: {}",
                    namespace, taskId, message, error);
        }
    }
}
