package dev.oncegate;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.common.PathUtils;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

/**
 * One client of a {@link SimZooKeeper}, as the protocol sees a Curator client through
 * {@link ZooKeeperOps}: its authenticated identities (replayed on every new session, as Curator
 * does), its current session, its watches (kept here, materialised as ZooKeeper's client does),
 * its connection state listeners, and a retry policy for calls that meet a connection loss.
 *
 * <h2>For the scheduler</h2>
 * <ul>
 *   <li>{@link #faults(SimFaults)}: asked before every call ({@link SimFaults#beforeCall}) whether
 *       to fail it before it is applied or to apply it and lose its reply.</li>
 *   <li>{@link #waits(Waits)}: where {@link #await} and {@link #awaitConnected} go (the protocol's
 *       only blocking points); by default they refuse to block.</li>
 *   <li>{@link #disconnect()}, {@link #reconnect()}, {@link #expireSession()},
 *       {@link #noticeExpiry()} and {@link #expire()}: the connection's life, with the watch events
 *       ({@code None}/Disconnected, SyncConnected, Expired) and Curator's connection states
 *       (SUSPENDED, LOST, RECONNECTED) they cause queued on the server's event queue.</li>
 * </ul>
 *
 * <p>Not thread-safe: the simulation runs on one thread (the {@link ZooKeeperOps} promise of
 * thread-safety is kept by running every actor on that thread).
 */
final class SimClient implements ZooKeeperOps {

    /** Where the protocol's blocking waits go: the scheduler's business. */
    interface Waits {

        /** As {@link ZooKeeperOps#await}: the caller holds {@code monitor}. */
        void await(SimClient client, Object monitor, long millis) throws InterruptedException;

        /** As {@link ZooKeeperOps#awaitConnected}. */
        boolean awaitConnected(SimClient client, Duration timeout) throws InterruptedException;
    }

    /** Refuses to block: a simulation must plug in its scheduler's waits. */
    static final Waits NO_WAITS = new Waits() {
        @Override
        public void await(SimClient client, Object monitor, long millis) {
            throw new UnsupportedOperationException(client + " cannot block on a monitor: plug the scheduler's waits in with waits(...)");
        }

        @Override
        public boolean awaitConnected(SimClient client, Duration timeout) {
            if (client.connected) {
                return true;
            }
            throw new UnsupportedOperationException(client + " is disconnected and cannot wait: plug the scheduler's waits in with waits(...)");
        }
    };

    private static final Method SET_MULTI_RESULTS;

    static {
        try {
            SET_MULTI_RESULTS = KeeperException.class.getDeclaredMethod("setMultiResults", List.class);
            SET_MULTI_RESULTS.setAccessible(true);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SimZooKeeper server;
    private final String name;
    private final int sessionTimeoutMs;
    private final Function<String, List<ACL>> aclProvider;
    private final List<Id> auth = new ArrayList<>();
    private final List<Consumer<ConnectionState>> listeners = new ArrayList<>();
    private final List<Consumer<ConnectionState>> listened = new ArrayList<>();
    private final List<SimElection> leaving = new ArrayList<>();
    private final TreeMap<String, LinkedHashSet<Watcher>> dataWatches = new TreeMap<>();
    private final TreeMap<String, LinkedHashSet<Watcher>> existWatches = new TreeMap<>();
    private final TreeMap<String, LinkedHashSet<Watcher>> childWatches = new TreeMap<>();
    private final List<String> pendingDeletes = new ArrayList<>();
    /** The paths the server holds a data (getData, exists) or child watch of this client on. */
    private final TreeSet<String> armedData = new TreeSet<>();
    private final TreeSet<String> armedChild = new TreeSet<>();
    private SimFaults faults = SimFaults.NONE;
    private Waits waits = NO_WAITS;
    private int retries;
    private long session;
    private boolean sessionAbandoned;
    private boolean connected;
    private boolean started;
    private long lastZxid;

    /**
     * A client, not started.
     *
     * @param aclProvider the ACL of a node created without one (Curator's ACLProvider); null for world:anyone
     */
    SimClient(SimZooKeeper server, String name, int sessionTimeoutMs, Function<String, List<ACL>> aclProvider) {
        this.server = Objects.requireNonNull(server, "server");
        this.name = Objects.requireNonNull(name, "name");
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.aclProvider = aclProvider != null ? aclProvider : path -> ZooDefs.Ids.OPEN_ACL_UNSAFE;
        server.register(this);
    }

    /** A client with world:anyone ACLs and a 6 s session. */
    SimClient(SimZooKeeper server, String name) {
        this(server, name, 6000, null);
    }

    // ---- configuration --------------------------------------------------------------------------

    /** Adds an identity ({@code digest}, {@code user:password}): to the session now, and to every later one. */
    SimClient authorization(String scheme, byte[] credential) {
        if (!scheme.equals("digest")) {
            throw new IllegalArgumentException("only the digest scheme is modelled, not " + scheme);
        }
        Id id = new Id("digest", digest(new String(credential, StandardCharsets.UTF_8)));
        auth.add(id);
        if (session != 0 && !sessionAbandoned) {
            server.addAuth(session, id);
        }
        return this;
    }

    /** The digest id ZooKeeper derives from {@code user:password}. */
    static String digest(String userPassword) {
        try {
            return DigestAuthenticationProvider.generateDigest(userPassword);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is missing from this JVM", e);
        }
    }

    SimClient faults(SimFaults faults) {
        this.faults = Objects.requireNonNull(faults, "faults");
        return this;
    }

    SimClient waits(Waits waits) {
        this.waits = Objects.requireNonNull(waits, "waits");
        return this;
    }

    /** How many times a call that met a connection loss is sent again (0: the loss surfaces at once). */
    SimClient retries(int retries) {
        if (retries < 0) {
            throw new IllegalArgumentException("retries: at least 0, got " + retries);
        }
        this.retries = retries;
        return this;
    }

    /** Opens the first session and connects (Curator's CONNECTED goes to the listeners registered so far). */
    SimClient start() {
        if (started) {
            throw new IllegalStateException(this + " is already started");
        }
        started = true;
        newSession();
        post(ConnectionState.CONNECTED);
        return this;
    }

    /** Closes the session (its ephemeral nodes go) and the client (Curator's {@code close()}). */
    void shutdown() {
        if (!started) {
            return;
        }
        started = false;
        connected = false;
        if (!sessionAbandoned) {
            server.closeSession(session);
        }
        dataWatches.clear();
        existWatches.clear();
        childWatches.clear();
    }

    SimZooKeeper server() {
        return server;
    }

    String name() {
        return name;
    }

    /** The session the client uses now (0 before the first). */
    long currentSession() {
        return session;
    }

    // ---- the connection's life (for the scheduler) ------------------------------------------------

    /** The connection drops: watchers see None/Disconnected, listeners SUSPENDED; calls fail with ConnectionLoss. */
    void disconnect() {
        if (!connected) {
            return;
        }
        connected = false;
        armedData.clear();
        armedChild.clear();
        deliverToAll(KeeperState.Disconnected, false);
        post(ConnectionState.SUSPENDED);
    }

    /**
     * The client reaches the server again. With its session alive: watchers see None/SyncConnected,
     * the watches are set again (an event for what changed meanwhile, as ZooKeeper's SetWatches),
     * listeners RECONNECTED. With its session gone: the expiry is noticed first (see
     * {@link #noticeExpiry()}), then a new session is opened (with the client's identities) and
     * listeners see RECONNECTED.
     */
    void reconnect() {
        if (!started || connected) {
            return;
        }
        if (!sessionAbandoned && server.sessionAlive(session)) {
            connected = true;
            deliverToAll(KeeperState.SyncConnected, false);
            resetWatches();
            post(ConnectionState.RECONNECTED);
            retryPendingDeletes();
            return;
        }
        noticeExpiry();
        newSession();
        post(ConnectionState.RECONNECTED);
        retryPendingDeletes();
    }

    /** The server expires the session (its ephemeral nodes go); the client, disconnected, learns it later. */
    void expireSession() {
        disconnect();
        if (!sessionAbandoned) {
            server.closeSession(session);
        }
    }

    /**
     * The client learns its session is over (ZooKeeper's Expired, or Curator giving the session up
     * after a session timeout of suspension): watchers see None/Expired and are dropped, listeners
     * LOST. The server may still hold the session until it expires there.
     */
    void noticeExpiry() {
        if (sessionAbandoned || session == 0) {
            return;
        }
        disconnect();
        sessionAbandoned = true;
        deliverToAll(KeeperState.Expired, true);
        post(ConnectionState.LOST);
    }

    /** The session expires at the server and the client learns it: {@link #expireSession()} then {@link #noticeExpiry()}. */
    void expire() {
        expireSession();
        noticeExpiry();
    }

    private void newSession() {
        session = server.openSession(sessionTimeoutMs, auth);
        sessionAbandoned = false;
        connected = true;
        lastZxid = server.zxid();
    }

    private void retryPendingDeletes() {
        List<String> due = List.copyOf(pendingDeletes);
        pendingDeletes.clear();
        due.forEach(this::deleteGuaranteed);
    }

    private void post(ConnectionState state) {
        for (Consumer<ConnectionState> l : List.copyOf(listeners)) {
            server.enqueue(this, name + " connection " + state, () -> l.accept(state));
        }
    }

    // ---- calls ------------------------------------------------------------------------------------

    @FunctionalInterface
    private interface Call<T> {
        T apply(long session) throws KeeperException;
    }

    /** One call, retried by the policy on a connection loss; each try asks the faults first. */
    private <T> T call(String op, String path, Call<T> call) throws KeeperException, InterruptedException {
        for (int attempt = 0; ; attempt++) {
            try {
                return once(op, path, call);
            } catch (KeeperException.ConnectionLossException e) {
                if (attempt >= retries) {
                    throw e;
                }
            }
        }
    }

    private <T> T once(String op, String path, Call<T> call) throws KeeperException, InterruptedException {
        SimFaults.Fault fault = faults.beforeCall(this, op, path);
        // A call made with the flag already set is sent all the same, and its wait throws at once (ZooKeeper's
        // client queues the packet, then Object.wait sees the flag): the same as an interrupted wait.
        boolean interrupt = fault == SimFaults.Fault.INTERRUPT_WAIT || Thread.currentThread().isInterrupted();
        if (!started) {
            throw new IllegalStateException(this + " is not started");
        }
        if (!connected || fault == SimFaults.Fault.FAIL_BEFORE) {
            throw KeeperException.create(Code.CONNECTIONLOSS, path);
        }
        T result;
        try {
            result = call.apply(session);
        } catch (KeeperException e) {
            if (fault == SimFaults.Fault.LOSE_REPLY) {
                throw KeeperException.create(Code.CONNECTIONLOSS, path);
            }
            lastZxid = server.zxid();
            if (interrupt) {
                interruptedWaiting(op, path); // a multiOnce goes on to its (refusing) reply
            }
            throw e;
        }
        if (fault == SimFaults.Fault.LOSE_REPLY) {
            throw KeeperException.create(Code.CONNECTIONLOSS, path);
        }
        lastZxid = server.zxid();
        if (interrupt) {
            interruptedWaiting(op, path); // a multiOnce goes on to its reply
        }
        return result;
    }

    /**
     * The wait for the reply to a call the server has decided, interrupted: the flag left set, as
     * Curator leaves it, and InterruptedException; but a {@code multiOnce} gets its reply all the
     * same, as {@code CuratorOps} waits for it ({@link #multiOnce} reads the flag).
     */
    private void interruptedWaiting(String op, String path) throws InterruptedException {
        Thread.currentThread().interrupt();
        if (!op.equals("multiOnce")) {
            throw new InterruptedException(this + ": interrupted waiting for the reply to " + op + " " + path);
        }
    }

    @Override
    public byte[] getData(String path, Stat stat, Watcher watcher) throws Exception {
        PathUtils.validatePath(path);
        SimZooKeeper.Read read = call("getData", path, s -> server.getData(s, path));
        if (stat != null) {
            SimZooKeeper.copy(read.stat(), stat);
        }
        register(dataWatches, path, watcher);
        return read.data();
    }

    @Override
    public List<String> getChildren(String path, Watcher watcher) throws Exception {
        PathUtils.validatePath(path);
        List<String> children = call("getChildren", path, s -> server.getChildren(s, path));
        register(childWatches, path, watcher);
        return children;
    }

    @Override
    public Stat exists(String path, Watcher watcher) throws Exception {
        PathUtils.validatePath(path);
        Stat stat = call("exists", path, s -> server.exists(s, path));
        register(stat != null ? dataWatches : existWatches, path, watcher);
        return stat;
    }

    @Override
    public List<ACL> getAcl(String path, Stat stat) throws Exception {
        PathUtils.validatePath(path);
        return call("getACL", path, s -> server.getAcl(s, path, stat));
    }

    @Override
    public String create(String path, byte[] data, CreateMode mode, List<ACL> acl, Stat stat, boolean parents) throws Exception {
        PathUtils.validatePath(path, mode.isSequential());
        List<ACL> nodeAcl = acl != null ? acl : aclProvider.apply(path);
        SimZooKeeper.Created created = call("create", path, s -> {
            try {
                return server.create(s, path, data, nodeAcl, mode);
            } catch (KeeperException.NoNodeException e) {
                if (!parents) {
                    throw e;
                }
                mkdirs(s, path);
                return server.create(s, path, data, nodeAcl, mode);
            }
        });
        if (stat != null) {
            SimZooKeeper.copy(created.stat(), stat);
        }
        return created.path();
    }

    /** Curator's ZKPaths.mkdirs: every missing ancestor of {@code path}, persistent, with the provider's ACL. */
    private void mkdirs(long s, String path) throws KeeperException {
        int from = 1;
        int slash;
        while ((slash = path.indexOf('/', from)) > 0) {
            String ancestor = path.substring(0, slash);
            if (server.exists(s, ancestor) == null) {
                try {
                    server.create(s, ancestor, new byte[0], aclProvider.apply(ancestor), CreateMode.PERSISTENT);
                } catch (KeeperException.NodeExistsException ignored) {
                    // created meanwhile: what mkdirs wanted
                }
            }
            from = slash + 1;
        }
    }

    @Override
    public Stat setData(String path, byte[] data, int version) throws Exception {
        PathUtils.validatePath(path);
        return call("setData", path, s -> server.setData(s, path, data, version));
    }

    @Override
    public void delete(String path, int version) throws Exception {
        PathUtils.validatePath(path);
        call("delete", path, s -> {
            server.delete(s, path, version);
            return null;
        });
    }

    @Override
    public Stat setAcl(String path, List<ACL> acl, int aclVersion) throws Exception {
        PathUtils.validatePath(path);
        return call("setACL", path, s -> server.setAcl(s, path, acl, aclVersion));
    }

    @Override
    public List<OpResult> multi(List<Op> ops) throws Exception {
        return call("multi", firstPath(ops), s -> server.multi(s, ops));
    }

    @Override
    public MultiReply multiOnce(List<Op> ops, Duration replyBound) {
        // The flag, set before the call or by its interrupted wait (once never clears it), is the reply's interrupt.
        try {
            List<OpResult> results = once("multiOnce", firstPath(ops), s -> server.multi(s, ops));
            return new MultiReply(Code.OK.intValue(), results, Thread.currentThread().isInterrupted());
        } catch (KeeperException.ConnectionLossException e) {
            return new MultiReply(Code.CONNECTIONLOSS.intValue(), null, Thread.currentThread().isInterrupted());
        } catch (KeeperException e) {
            return new MultiReply(e.code().intValue(), e.getResults(), Thread.currentThread().isInterrupted());
        } catch (InterruptedException e) {
            throw new IllegalStateException("multiOnce is never interrupted (once sets the flag instead)", e);
        }
    }

    private static String firstPath(List<Op> ops) {
        return ops.isEmpty() ? "/" : ops.get(0).getPath();
    }

    /** Attaches a multi's results to its exception, as ZooKeeper's client does. */
    static void attachResults(KeeperException e, List<OpResult> results) {
        try {
            SET_MULTI_RESULTS.invoke(e, results);
        } catch (IllegalAccessException | InvocationTargetException reflection) {
            throw new IllegalStateException("cannot attach a multi's results to its KeeperException", reflection);
        }
    }

    @Override
    public Op opCheck(String path, int version) {
        return Op.check(path, version);
    }

    @Override
    public Op opCreate(String path, byte[] data, CreateMode mode, List<ACL> acl) {
        return Op.create(path, data, acl != null ? acl : aclProvider.apply(path), mode);
    }

    @Override
    public Op opSetData(String path, byte[] data, int version) {
        return Op.setData(path, data, version);
    }

    @Override
    public Op opDelete(String path, int version) {
        return Op.delete(path, version);
    }

    @Override
    public Op opGetData(String path) {
        return Op.getData(path);
    }

    @Override
    public Op opGetChildren(String path) {
        return Op.getChildren(path);
    }

    // ---- watches ----------------------------------------------------------------------------------

    /**
     * Drops the watches at the client; each removed watcher receives DataWatchRemoved or
     * ChildWatchRemoved (as ZooKeeper's client delivers). Nothing happens when the call fails
     * (disconnected, or a fault) or the watcher is not registered on the path.
     */
    @Override
    public void removeWatches(String path, Watcher watcher) {
        SimFaults.Fault fault = faults.beforeCall(this, "removeWatches", path);
        if (!started || !connected || fault != SimFaults.Fault.NONE) {
            return;
        }
        Set<Watcher> data = new LinkedHashSet<>();
        data.addAll(take(dataWatches, path, watcher));
        data.addAll(take(existWatches, path, watcher));
        Set<Watcher> child = take(childWatches, path, watcher);
        if (watcher == null) {
            armedData.remove(path);
            armedChild.remove(path);
        }
        queue(data, new WatchedEvent(EventType.DataWatchRemoved, KeeperState.SyncConnected, path));
        queue(child, new WatchedEvent(EventType.ChildWatchRemoved, KeeperState.SyncConnected, path));
    }

    private void register(Map<String, LinkedHashSet<Watcher>> table, String path, Watcher watcher) {
        if (watcher != null) {
            table.computeIfAbsent(path, p -> new LinkedHashSet<>()).add(watcher);
            (table == childWatches ? armedChild : armedData).add(path);
        }
    }

    /** Registers a data watch as a successful getData/exists would (for election steps run off the call path). */
    void registerDataWatch(String path, Watcher watcher) {
        register(dataWatches, path, watcher);
    }

    /** Removes {@code watcher} (or, when null, all) from {@code table} at {@code path}: what was removed. */
    private static Set<Watcher> take(Map<String, LinkedHashSet<Watcher>> table, String path, Watcher watcher) {
        LinkedHashSet<Watcher> set = table.get(path);
        if (set == null) {
            return Set.of();
        }
        if (watcher == null) {
            table.remove(path);
            return set;
        }
        if (!set.remove(watcher)) {
            return Set.of();
        }
        if (set.isEmpty()) {
            table.remove(path);
        }
        return Set.of(watcher);
    }

    /**
     * A watch event at the server: if the server holds a watch of this client for it, the watch
     * goes; the event reaches the client only if its session may READ through {@code acl} (null:
     * no check, as for SetWatches), and then the watchers it concerns are materialised as
     * ZooKeeper's client does (a dropped event leaves the client's watchers registered locally,
     * armed again by a later registration of the path or a reconnection).
     */
    void trigger(EventType type, String path, long zxid, List<ACL> acl) {
        boolean data = type != EventType.NodeChildrenChanged && armedData.remove(path);
        boolean child = (type == EventType.NodeChildrenChanged || type == EventType.NodeDeleted) && armedChild.remove(path);
        if (!data && !child || acl != null && !server.mayRead(session, acl)) {
            return;
        }
        Set<Watcher> targets = new LinkedHashSet<>();
        switch (type) {
            case NodeCreated, NodeDataChanged -> {
                targets.addAll(take(dataWatches, path, null));
                targets.addAll(take(existWatches, path, null));
            }
            case NodeChildrenChanged -> targets.addAll(take(childWatches, path, null));
            case NodeDeleted -> {
                targets.addAll(take(dataWatches, path, null));
                targets.addAll(take(existWatches, path, null));
                targets.addAll(take(childWatches, path, null));
            }
            default -> throw new IllegalArgumentException("not a node event: " + type);
        }
        queue(targets, new WatchedEvent(type, KeeperState.SyncConnected, path, zxid));
    }

    private void queue(Set<Watcher> watchers, WatchedEvent event) {
        for (Watcher w : watchers) {
            server.enqueue(this, name + " " + event.getType() + " " + event.getPath(), () -> w.process(event));
        }
    }

    /** A None event to every watcher (each once); on Expired the watches are dropped. */
    private void deliverToAll(KeeperState state, boolean drop) {
        Set<Watcher> all = new LinkedHashSet<>();
        for (Map<String, LinkedHashSet<Watcher>> table : List.of(dataWatches, existWatches, childWatches)) {
            table.values().forEach(all::addAll);
            if (drop) {
                table.clear();
            }
        }
        queue(all, new WatchedEvent(EventType.None, state, null));
    }

    /** ZooKeeper's SetWatches on reconnection: an event for each watch whose node changed since the last reply. */
    private void resetWatches() {
        armedData.clear();
        armedData.addAll(dataWatches.keySet());
        armedData.addAll(existWatches.keySet());
        armedChild.clear();
        armedChild.addAll(childWatches.keySet());
        for (String path : List.copyOf(dataWatches.keySet())) {
            Stat st = server.stat(path);
            if (st == null) {
                trigger(EventType.NodeDeleted, path, server.zxid(), null);
            } else if (st.getMzxid() > lastZxid) {
                trigger(EventType.NodeDataChanged, path, st.getMzxid(), null);
            }
        }
        for (String path : List.copyOf(existWatches.keySet())) {
            Stat st = server.stat(path);
            if (st != null) {
                trigger(EventType.NodeCreated, path, st.getCzxid(), null);
            }
        }
        for (String path : List.copyOf(childWatches.keySet())) {
            Stat st = server.stat(path);
            if (st == null) {
                trigger(EventType.NodeDeleted, path, server.zxid(), null);
            } else if (st.getPzxid() > lastZxid) {
                trigger(EventType.NodeChildrenChanged, path, st.getPzxid(), null);
            }
        }
        lastZxid = server.zxid();
    }

    /** Forgets {@code watcher} on {@code path} without an event (Curator's local removal of a recipe's watchers). */
    void forgetWatch(String path, Watcher watcher) {
        take(dataWatches, path, watcher);
        take(existWatches, path, watcher);
        take(childWatches, path, watcher);
    }

    /**
     * Curator's guaranteed delete in the background: tried as a queued step, and while the client
     * is disconnected, again on each reconnection until it is done (NoNode counts as done).
     */
    void deleteGuaranteed(String path) {
        server.enqueue(this, name + " guaranteed delete " + path, () -> {
            if (!connected()) {
                pendingDeletes.add(path);
                return;
            }
            try {
                server.delete(session, path, -1);
            } catch (KeeperException e) {
                if (e.code() != Code.NONODE) {
                    pendingDeletes.add(path);
                }
            }
        });
    }

    /** The ACL Curator's ACLProvider gives {@code path}. */
    List<ACL> aclFor(String path) {
        return aclProvider.apply(path);
    }

    /** How many watchers are registered (for tests of removal and expiry). */
    int watchCount() {
        int n = 0;
        for (Map<String, LinkedHashSet<Watcher>> table : List.of(dataWatches, existWatches, childWatches)) {
            for (Set<Watcher> s : table.values()) {
                n += s.size();
            }
        }
        return n;
    }

    // ---- session ----------------------------------------------------------------------------------

    /** The session in use: 0 once the client learnt its session ended and until it has a new one (as Curator's new handle). */
    @Override
    public long sessionId() {
        return sessionAbandoned ? 0 : session;
    }

    @Override
    public int sessionTimeoutMs() {
        return sessionTimeoutMs;
    }

    @Override
    public boolean connected() {
        return started && connected;
    }

    @Override
    public boolean awaitConnected(Duration timeout) throws InterruptedException {
        return waits.awaitConnected(this, timeout);
    }

    @Override
    public boolean started() {
        return started;
    }

    @Override
    public String connectString() {
        return "sim:" + name;
    }

    /** Connection states go to {@code states} (queued) until {@link #close()}; {@code errors} hears of nothing (background steps fail quietly, as the latch's do). */
    @Override
    public void listen(Consumer<ConnectionState> states, BiConsumer<String, Throwable> errors) {
        Objects.requireNonNull(errors, "errors");
        onConnectionState(states);
        listened.add(states);
    }

    /** Stops what {@link #listen} started and leaves at once the elections waiting for their turn to leave; the session stays. */
    @Override
    public void close() {
        listened.forEach(listeners::remove);
        listened.clear();
        for (SimElection e : List.copyOf(leaving)) {
            e.leaveNow();
        }
        leaving.clear();
    }

    /** A connection state listener of the client's own (a recipe's), kept until removed. */
    void onConnectionState(Consumer<ConnectionState> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    void removeConnectionStateListener(Consumer<ConnectionState> listener) {
        listeners.remove(listener);
    }

    /** An election member that left with everyone and waits for its turn to be closed (until {@link #close()}). */
    void waitingToLeave(SimElection member, boolean waiting) {
        if (waiting) {
            leaving.add(member);
        } else {
            leaving.remove(member);
        }
    }

    @Override
    public ElectionMember joinElection(String latchPath, String id, Runnable onChange) {
        return SimElection.join(this, latchPath, id, onChange);
    }

    @Override
    public void await(Object monitor, long millis) throws InterruptedException {
        waits.await(this, monitor, millis);
    }

    @Override
    public String toString() {
        return "SimClient[" + name + ", session 0x" + Long.toHexString(session) + (connected ? ", connected" : ", disconnected") + "]";
    }
}
