package dev.oncegate;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gate: configuration shared by its attempts, the namespace's remembered genesis id, the
 * rollback witness ({@link ZxidMarks}), and one connection-state listener and one
 * unhandled-error listener on the caller's client, which fan out to the live attempts (they
 * only wake the attempts' owner threads).
 *
 * <p>Thread-safe: the set of live attempts is concurrent, the genesis id an atomic reference,
 * the marks thread-safe.
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
    private final ZxidMarks marks;
    private final AtomicReference<String> genesisId = new AtomicReference<>();
    private final Set<DefaultAttempt> live = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ConnectionStateListener connectionListener = this::onConnectionState;
    private final UnhandledErrorListener errorListener = this::onUnhandledError;

    DefaultGate(CuratorFramework client, String namespace, MeterRegistry registry, Clock clock, Duration leaseTtl,
                Duration connectTimeout, String taskId, String host, long pid, boolean initializeNamespace,
                ZxidMarks marks) {
        this.client = client;
        this.namespace = namespace;
        this.clock = clock;
        this.leaseTtl = leaseTtl;
        this.connectTimeout = connectTimeout;
        this.taskId = taskId;
        this.host = host;
        this.pid = pid;
        this.initializeNamespace = initializeNamespace;
        this.marks = marks;
        this.protocol = new ScopeProtocol(client, namespace, clock, this::observed);
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
     * Checks the namespace's genesis: present (or created, when the builder allows it), carrying
     * its id marker, and the same as the first one this gate saw. Returns null when fine, else the
     * stop.
     */
    Decision.Stop checkGenesis() throws Exception {
        Optional<Genesis> genesis = protocol.readGenesis();
        if (genesis.isEmpty() && initializeNamespace) {
            genesis = Optional.of(protocol.createGenesis().genesis());
        }
        String path = Layout.genesis(namespace);
        if (genesis.isEmpty()) {
            return new Decision.StopUnavailable(StopReason.NAMESPACE_NOT_INITIALISED, Evidence.of(path, -1,
                    "namespace " + namespace + " has no genesis record: if this is a new namespace run `oncegate init"
                            + " --namespace " + namespace + "`; if it held keys before, its data was lost or restored"
                            + " from an old snapshot and must not be taken for a fresh start"));
        }
        String seen = genesis.get().id();
        String first = genesisId.get();
        if (first == null) {
            if (!protocol.genesisMarkerExists(seen)) {
                return new Decision.StopUnavailable(StopReason.NAMESPACE_NOT_INITIALISED, Evidence.of(
                        Layout.genesisMarker(namespace, seen), -1, "namespace " + namespace + "'s genesis " + seen
                                + " has no id marker (it was written by an older oncegate): run `oncegate init --namespace "
                                + namespace + "` once, which adds it and changes nothing else"));
            }
            genesisId.compareAndSet(null, seen);
            first = genesisId.get();
        }
        if (!first.equals(seen)) {
            return new Decision.StopUnavailable(StopReason.NAMESPACE_REPLACED, Evidence.of(path, -1,
                    "namespace " + namespace + " now has genesis " + seen + " but this gate started with "
                            + first + ": its data was replaced; restart the worker after an operator checked it"));
        }
        return null;
    }

    /** The genesis id this gate works under (set by the first successful {@link #checkGenesis}). */
    String genesisId() {
        return genesisId.get();
    }

    /** A zxid a read or write revealed: the ensemble has reached at least this far. */
    void observed(long zxid) {
        String id = genesisId.get();
        if (id != null && zxid > 0) {
            marks.observe(namespace, id, zxid);
        }
    }

    /** The highest zxid this gate's witness has seen for its namespace life. */
    long highestZxid() {
        String id = genesisId.get();
        return id == null ? 0 : marks.highest(namespace, id);
    }

    void forget(DefaultAttempt attempt) {
        live.remove(attempt);
    }

    boolean isClosed() {
        return closed.get();
    }

    @Override
    public KeyHistory inspect(String key) throws InterruptedException {
        EffectKey.requireKeyText(key);
        String keyPath = Layout.keyPath(namespace, key);
        try {
            return history(key, keyPath);
        } catch (InterruptedException e) {
            throw e;
        } catch (OncegateException e) {
            throw e;
        } catch (Exception e) {
            throw new OncegateException("could not read key " + keyPath + ": " + e
                    + " (check that ZooKeeper is reachable and this identity may read the namespace)", e);
        }
    }

    private KeyHistory history(String key, String keyPath) throws Exception {
        Decision.Stop unknown = checkGenesis();
        if (unknown != null) {
            throw new OncegateException(unknown.evidence().detail());
        }
        byte[] keyData;
        try {
            keyData = client.getData().forPath(keyPath);
        } catch (KeeperException.NoNodeException e) {
            return new KeyHistory(key, keyPath, false, null, "absent", List.of(), List.of(), null);
        }
        Map<String, Object> record = Records.tree(keyPath, keyData);
        int latest = protocol.latestScope(keyPath);
        List<KeyHistory.ScopeHistory> scopes = new ArrayList<>();
        List<ScopeView> views = new ArrayList<>();
        for (int n = 0; n <= latest; n++) {
            Map<String, byte[]> raw = new HashMap<>();
            ScopeView view;
            try {
                view = protocol.readScope(keyPath, n, null, raw);
            } catch (KeeperException.NoNodeException gap) {
                throw new UnreadableRecordException(Layout.scope(keyPath, n), "scope " + n + " is missing below scope " + latest);
            }
            views.add(view);
            String scopePath = view.path();
            Map<String, Object> data = Records.tree(scopePath, raw.get(scopePath));
            Map<String, Object> armed = view.armed() == null ? null : Records.tree(view.armedPath(), raw.get(view.armedPath()));
            Map<String, Object> outcome = view.outcome() == null ? null
                    : Records.tree(Layout.outcome(scopePath), raw.get(Layout.outcome(scopePath)));
            scopes.add(new KeyHistory.ScopeHistory(n, view.state().wireName(), view.version(), view.mzxid(), data, armed, outcome));
        }
        String authPath = Layout.authorizations(keyPath);
        List<String> names = new ArrayList<>(client.getChildren().forPath(authPath));
        names.sort(null);
        List<KeyHistory.AuthorizationRecord> auths = new ArrayList<>();
        for (String name : names) {
            String p = authPath + "/" + name;
            Stat stat = new Stat();
            byte[] data = client.getData().storingStatIn(stat).forPath(p);
            int after = Layout.authorizedAfter(name);
            AuthorizationView view;
            try {
                view = AuthorizationView.present(p, after, stat, Records.decodeAuthorization(p, data));
            } catch (UnreadableRecordException e) {
                view = AuthorizationView.unreadable(p, after, stat, e.getMessage());
            }
            Map<String, Object> tree;
            try {
                tree = Json.decodeObject(data);
            } catch (IllegalArgumentException e) {
                tree = null;
            }
            String status = status(name, view, views);
            auths.add(new KeyHistory.AuthorizationRecord(name, tree, after,
                    status.equals("used") ? after + 1 : -1, status));
        }
        ScopeView last = views.get(views.size() - 1);
        String command = last.state().consumed()
                ? "create " + Layout.authorization(keyPath, last.scope()) + " '{\"by\":\"<you>\",\"reason\":\"<why>\"}'"
                : null;
        return new KeyHistory(key, keyPath, true, record, last.state().wireName(), List.copyOf(scopes),
                List.copyOf(auths), command);
    }

    /** What an authorization does now; see {@link KeyHistory.AuthorizationRecord#status()}. */
    private static String status(String name, AuthorizationView auth, List<ScopeView> scopes) {
        int after = auth.after();
        if (after < 0) {
            return "ignored";
        }
        if (auth.presence() == AuthorizationView.Presence.UNREADABLE) {
            return "unreadable";
        }
        if (after + 1 < scopes.size() && name.equals(scopes.get(after + 1).data().opened())) {
            return "used";
        }
        if (after >= scopes.size()) {
            return "premature";
        }
        ScopeView scope = scopes.get(after);
        if (auth.honours(scope)) {
            return after == scopes.size() - 1 ? "unused" : "stale";
        }
        return after == scopes.size() - 1 || auth.czxid() <= scope.mzxid() ? "premature" : "stale";
    }

    @Override
    public Authorization authorize(String key, String by, String reason) throws InterruptedException {
        EffectKey.requireKeyText(key);
        Objects.requireNonNull(by, "by");
        Objects.requireNonNull(reason, "reason");
        if (by.isBlank()) {
            throw new IllegalArgumentException("by: must name who authorizes the redelivery");
        }
        if (reason.isBlank()) {
            throw new IllegalArgumentException("reason: must say why a new delivery is justified");
        }
        Records.requireWellFormed("by", by);
        Records.requireWellFormed("reason", reason);
        String keyPath = Layout.keyPath(namespace, key);
        try {
            KeyHistory before = history(key, keyPath);
            if (!before.exists()) {
                throw new IllegalArgumentException("key " + key + " does not exist in " + namespace
                        + ": nothing was ever attempted for it, so there is nothing to redeliver");
            }
            int n = before.scopes().size() - 1;
            String state = before.state();
            if (!ScopeView.State.valueOf(state.toUpperCase(java.util.Locale.ROOT)).consumed()) {
                throw new IllegalArgumentException("key " + key + " is " + state + " in scope " + n + ", not consumed"
                        + " (sent_verified, send_status_unknown, or armed without outcome): nothing to authorize");
            }
            Records.Authorization record = new Records.Authorization(by, reason, clock.instant(), host, pid,
                    Records.newAttemptId());
            ScopeProtocol.Authorizing done = protocol.authorize(keyPath, n, record);
            String name = Layout.AFTER_PREFIX + n;
            KeyHistory after = history(key, keyPath);
            String status = after.authorizations().stream().filter(a -> a.name().equals(name))
                    .map(KeyHistory.AuthorizationRecord::status).findFirst().orElse("unreadable");
            if (done.created()) {
                LOG.info("oncegate namespace {}: {} authorized a redelivery of key {} after scope {}: {}",
                        namespace, by, key, n, reason);
                return new Authorization(done.path(), n, true, by, reason, status);
            }
            Records.Authorization existing = done.existing().record();
            return new Authorization(done.path(), n, false, existing == null ? null : existing.by(),
                    existing == null ? null : existing.reason(), status);
        } catch (InterruptedException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new OncegateException("could not authorize a redelivery of " + keyPath + ": " + e
                    + " (check that ZooKeeper is reachable and this identity may create authorizations)", e);
        }
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
            marks.flush();
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
