package dev.oncegate;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.LongSupplier;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.proto.CheckVersionRequest;
import org.apache.zookeeper.proto.CreateRequest;
import org.apache.zookeeper.proto.DeleteRequest;
import org.apache.zookeeper.proto.SetDataRequest;

/**
 * An in-memory ZooKeeper server for the deterministic simulator: the tree, the zxid, sessions
 * and their ephemeral nodes, ACLs and the server's (virtual) clock, with the semantics of a
 * ZooKeeper 3.9 server as {@code SimZooKeeperConformanceTest} compares them against a real one.
 * Clients are {@link SimClient}s; watches live at the client, as in ZooKeeper's own client.
 *
 * <h2>What it keeps of ZooKeeper</h2>
 * <ul>
 *   <li>Every write request is one transaction with one zxid, a multi included; a write the
 *       server refuses (NodeExists, BadVersion, NoAuth, a failed multi...) still takes its zxid,
 *       as ZooKeeper logs it as an error transaction. Opening and closing a session are
 *       transactions too. Reads take none.</li>
 *   <li>A create sets the parent's cversion (+1) and pzxid; a delete sets only the parent's
 *       pzxid. Sequential names append the parent's cversion as {@code %010d}.</li>
 *   <li>Checks in ZooKeeper's order (PrepRequestProcessor / FinalRequestProcessor): create: ACL
 *       validity, parent exists, CREATE on the parent, node absent, parent not ephemeral; delete:
 *       parent exists, DELETE on the parent, node exists, version, no children; setData: node,
 *       WRITE, version; setACL: ACL validity, node, ADMIN, ACL version; check: node, READ,
 *       version; getData, getChildren and exists (of an existing node): READ; getACL: READ or
 *       ADMIN, digest ids shown as {@code user:x} without ADMIN.</li>
 *   <li>A multi is atomic: the failing op carries its code, the ops before it {@code OK}, the
 *       ops after it {@code RUNTIMEINCONSISTENCY}; a read-only multi answers op by op.</li>
 *   <li>Containers have ephemeralOwner {@link #CONTAINER_OWNER} and are reaped, when empty after
 *       having had a child, by {@link #reapContainers()} (ZooKeeper's ContainerManager).</li>
 * </ul>
 *
 * <h2>Determinism</h2>
 * No threads, no wall clock (time comes from the given supplier), no randomness, no hash
 * ordering: nodes, children and sessions are kept sorted. Watch events, connection state
 * changes and election steps are never run inside an operation: they are queued
 * ({@link #pollEvent()}) for the scheduler to run.
 *
 * <p>Not thread-safe: the simulation runs on one thread.
 */
final class SimZooKeeper {

    /** The ephemeralOwner ZooKeeper shows for a container node. */
    static final long CONTAINER_OWNER = Long.MIN_VALUE;

    private static final long FIRST_SESSION_ID = 0x0100_0000_0000_0000L;

    private final LongSupplier clock;
    private final TreeMap<String, Node> nodes = new TreeMap<>();
    private final TreeMap<Long, Session> sessions = new TreeMap<>();
    private final List<SimClient> clients = new ArrayList<>();
    private final ArrayDeque<SimEvent> events = new ArrayDeque<>();
    private long zxid;
    private long nextSessionId = FIRST_SESSION_ID;
    private long uuids;
    private long requests;

    /** @param clock the server's clock, in epoch milliseconds (ctime, mtime) */
    SimZooKeeper(LongSupplier clock) {
        this.clock = clock;
        Node root = new Node("/", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, 0, 0, 0);
        nodes.put("/", root);
        Node zookeeper = new Node("/zookeeper", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, 0, 0, 0);
        nodes.put("/zookeeper", zookeeper);
        root.children.add("zookeeper");
    }

    /** One queued piece of client-side work: a watch event, a connection state change, an election step. */
    record SimEvent(SimClient client, String description, Runnable action) {

        void run() {
            action.run();
        }
    }

    // ---- the event queue (for the scheduler) ------------------------------------------------------

    void enqueue(SimClient client, String description, Runnable action) {
        events.addLast(new SimEvent(client, description, action));
    }

    /** The oldest pending event, removed; null when none. */
    SimEvent pollEvent() {
        return events.pollFirst();
    }

    /** {@code client}'s oldest pending event, removed (events of one client keep their order); null when none. */
    SimEvent pollEvent(SimClient client) {
        for (Iterator<SimEvent> it = events.iterator(); it.hasNext(); ) {
            SimEvent e = it.next();
            if (e.client() == client) {
                it.remove();
                return e;
            }
        }
        return null;
    }

    /** The pending events, oldest first (a copy). */
    List<SimEvent> pendingEvents() {
        return List.copyOf(events);
    }

    /** Runs pending events, and those they queue, until none is left or {@code limit} ran: how many ran. */
    int runEvents(int limit) {
        int ran = 0;
        SimEvent e;
        while (ran < limit && (e = events.pollFirst()) != null) {
            e.run();
            ran++;
        }
        return ran;
    }

    // ---- inspection (no ACLs: what the checker sees) ----------------------------------------------

    /** The last zxid the server assigned. */
    long zxid() {
        return zxid;
    }

    /** The server's clock now. */
    long now() {
        return clock.getAsLong();
    }

    /** How many requests the server answered (reads and writes), for measurements. */
    long requests() {
        return requests;
    }

    /** A node's stat, or null when absent. */
    Stat stat(String path) {
        Node n = nodes.get(path);
        return n == null ? null : n.stat();
    }

    /** A node's data (a copy), or null when absent. */
    byte[] data(String path) {
        Node n = nodes.get(path);
        return n == null ? null : n.data.clone();
    }

    /** A node's ACL, or null when absent. */
    List<ACL> acl(String path) {
        Node n = nodes.get(path);
        return n == null ? null : n.acl;
    }

    /** A node's children, sorted, or null when absent. */
    List<String> children(String path) {
        Node n = nodes.get(path);
        return n == null ? null : List.copyOf(n.children);
    }

    /** Every path in the tree at or below {@code path}, sorted. */
    NavigableSet<String> paths(String path) {
        String prefix = path.equals("/") ? "/" : path + "/";
        TreeSet<String> out = new TreeSet<>();
        if (nodes.containsKey(path)) {
            out.add(path);
        }
        out.addAll(nodes.subMap(prefix, true, prefix + Character.MAX_VALUE, false).keySet());
        return out;
    }

    /** Whether session {@code id} is open at the server. */
    boolean sessionAlive(long id) {
        return sessions.containsKey(id);
    }

    /** The ids of the open sessions, ascending. */
    List<Long> sessionIds() {
        return List.copyOf(sessions.keySet());
    }

    /** A deterministic stand-in for {@code UUID.randomUUID()} (Curator's protected names). */
    String nextUuid() {
        return new UUID(0L, ++uuids).toString();
    }

    // ---- clients and sessions ---------------------------------------------------------------------

    void register(SimClient client) {
        clients.add(client);
    }

    /** Opens a session (a transaction) whose authentication is {@code auth}: its id. */
    long openSession(int timeoutMs, List<Id> auth) {
        requests++;
        zxid++;
        long id = nextSessionId++;
        Session s = new Session(id, timeoutMs);
        s.auth.add(new Id("ip", "127.0.0.1"));
        s.auth.addAll(auth);
        sessions.put(id, s);
        return id;
    }

    /** Adds an authenticated identity to an open session (not a transaction). */
    void addAuth(long sessionId, Id id) {
        Session s = sessions.get(sessionId);
        if (s != null && !s.auth.contains(id)) {
            s.auth.add(id);
        }
    }

    /**
     * Closes (or expires) session {@code id}, a transaction: its ephemeral nodes are deleted with
     * that transaction's zxid, and the watches of other clients fire. Nothing if it is not open.
     */
    void closeSession(long id) {
        Session s = sessions.remove(id);
        if (s == null) {
            return;
        }
        requests++;
        Txn t = new Txn(++zxid, now());
        for (String path : List.copyOf(s.ephemerals)) {
            Node n = nodes.get(path);
            Node parent = nodes.get(parentOf(path));
            removeNode(t, n, parent);
        }
        s.ephemerals.clear();
        t.fire();
    }

    /**
     * ZooKeeper's ContainerManager, one pass: deletes (one transaction each) every container that
     * has no children and has had one (cversion &gt; 0). The reaped paths, in order.
     */
    List<String> reapContainers() {
        List<String> candidates = new ArrayList<>();
        for (Node n : nodes.values()) {
            if (n.ephemeralOwner == CONTAINER_OWNER && n.children.isEmpty() && n.cversion > 0) {
                candidates.add(n.path);
            }
        }
        List<String> reaped = new ArrayList<>();
        for (String path : candidates) {
            Node n = nodes.get(path);
            if (n != null && n.children.isEmpty()) {
                requests++;
                Txn t = new Txn(++zxid, now());
                removeNode(t, n, nodes.get(parentOf(path)));
                t.fire();
                reaped.add(path);
            }
        }
        return reaped;
    }

    // ---- reads ------------------------------------------------------------------------------------

    /** A node's data and stat, as getData returns them. */
    record Read(byte[] data, Stat stat) {
    }

    Read getData(long session, String path) throws KeeperException {
        requests++;
        Node n = existing(path);
        checkAcl(n.acl, Perms.READ, session(session), path);
        return new Read(n.data.clone(), n.stat());
    }

    /** The stat, or null when absent; NoAuth when present and not readable. */
    Stat exists(long session, String path) throws KeeperException {
        requests++;
        Node n = nodes.get(path);
        if (n == null) {
            return null;
        }
        checkAcl(n.acl, Perms.READ, session(session), path);
        return n.stat();
    }

    /** The children, sorted. */
    List<String> getChildren(long session, String path) throws KeeperException {
        requests++;
        Node n = existing(path);
        checkAcl(n.acl, Perms.READ, session(session), path);
        return List.copyOf(n.children);
    }

    /** The ACL (digest ids redacted for a session without ADMIN) and the stat. */
    List<ACL> getAcl(long session, String path, Stat stat) throws KeeperException {
        requests++;
        Node n = existing(path);
        Session s = session(session);
        checkAcl(n.acl, Perms.READ | Perms.ADMIN, s, path);
        if (stat != null) {
            copy(n.stat(), stat);
        }
        if (permitted(n.acl, Perms.ADMIN, s.auth)) {
            return List.copyOf(n.acl);
        }
        List<ACL> redacted = new ArrayList<>(n.acl.size());
        for (ACL a : n.acl) {
            redacted.add(a.getId().getScheme().equals("digest")
                    ? new ACL(a.getPerms(), new Id("digest", a.getId().getId().replaceAll(":.*", ":x")))
                    : a);
        }
        return redacted;
    }

    // ---- writes -----------------------------------------------------------------------------------

    /** A created node's path and stat. */
    record Created(String path, Stat stat) {
    }

    Created create(long session, String path, byte[] data, List<ACL> acl, CreateMode mode) throws KeeperException {
        return write(session, (t, s) -> doCreate(t, s, path, data, acl, mode));
    }

    Stat setData(long session, String path, byte[] data, int version) throws KeeperException {
        return write(session, (t, s) -> doSetData(t, s, path, data, version));
    }

    void delete(long session, String path, int version) throws KeeperException {
        write(session, (t, s) -> {
            doDelete(t, s, path, version);
            return null;
        });
    }

    Stat setAcl(long session, String path, List<ACL> acl, int aclVersion) throws KeeperException {
        return write(session, (t, s) -> doSetAcl(t, s, path, acl, aclVersion));
    }

    /**
     * A multi: a read-only one ({@link Op.GetData}/{@link Op.GetChildren} only) answers op by op;
     * a write one is one atomic transaction, and when an op fails it throws that op's
     * KeeperException (no path, as ZooKeeper's client) with every op's result attached.
     */
    List<OpResult> multi(long session, List<Op> ops) throws KeeperException {
        boolean reads = !ops.isEmpty() && ops.stream().allMatch(op -> op.getKind() == Op.OpKind.READ);
        if (!reads && ops.stream().anyMatch(op -> op.getKind() == Op.OpKind.READ)) {
            throw new IllegalArgumentException("Mixing read and write operations (transaction and read) in one request not supported");
        }
        return reads ? multiRead(session, ops) : multiWrite(session, ops);
    }

    private List<OpResult> multiRead(long session, List<Op> ops) {
        requests++;
        List<OpResult> results = new ArrayList<>(ops.size());
        for (Op op : ops) {
            try {
                if (op instanceof Op.GetData) {
                    Read r = getData(session, op.getPath());
                    results.add(new OpResult.GetDataResult(r.data(), r.stat()));
                } else {
                    results.add(new OpResult.GetChildrenResult(getChildren(session, op.getPath())));
                }
            } catch (KeeperException e) {
                results.add(new OpResult.ErrorResult(e.code().intValue()));
            }
            requests--;
        }
        return results;
    }

    private List<OpResult> multiWrite(long session, List<Op> ops) throws KeeperException {
        requests++;
        Session s = session(session);
        Txn t = new Txn(++zxid, now());
        List<OpResult> results = new ArrayList<>(ops.size());
        KeeperException failure = null;
        for (Op op : ops) {
            if (failure != null) {
                results.add(new OpResult.ErrorResult(Code.RUNTIMEINCONSISTENCY.intValue()));
                continue;
            }
            try {
                results.add(apply(t, s, op));
            } catch (KeeperException e) {
                failure = e;
                t.rollback();
                results.replaceAll(r -> new OpResult.ErrorResult(Code.OK.intValue()));
                results.add(new OpResult.ErrorResult(e.code().intValue()));
            }
        }
        if (failure != null) {
            KeeperException thrown = KeeperException.create(failure.code());
            SimClient.attachResults(thrown, results);
            throw thrown;
        }
        t.fire();
        return results;
    }

    private OpResult apply(Txn t, Session s, Op op) throws KeeperException {
        switch (op.getType()) {
            case ZooDefs.OpCode.create, ZooDefs.OpCode.createContainer, ZooDefs.OpCode.create2 -> {
                CreateRequest r = (CreateRequest) op.toRequestRecord();
                Created c = doCreate(t, s, r.getPath(), r.getData(), r.getAcl(), CreateMode.fromFlag(r.getFlags()));
                return op.getType() == ZooDefs.OpCode.create2 ? new OpResult.CreateResult(c.path(), c.stat())
                        : new OpResult.CreateResult(c.path());
            }
            case ZooDefs.OpCode.delete -> {
                DeleteRequest r = (DeleteRequest) op.toRequestRecord();
                doDelete(t, s, r.getPath(), r.getVersion());
                return new OpResult.DeleteResult();
            }
            case ZooDefs.OpCode.setData -> {
                SetDataRequest r = (SetDataRequest) op.toRequestRecord();
                return new OpResult.SetDataResult(doSetData(t, s, r.getPath(), r.getData(), r.getVersion()));
            }
            case ZooDefs.OpCode.check -> {
                CheckVersionRequest r = (CheckVersionRequest) op.toRequestRecord();
                Node n = existing(r.getPath());
                checkAcl(n.acl, Perms.READ, s, r.getPath());
                checkVersion(n.version, r.getVersion(), r.getPath());
                return new OpResult.CheckResult();
            }
            default -> throw new UnsupportedOperationException("op type " + op.getType() + " is not modelled");
        }
    }

    @FunctionalInterface
    private interface Body<T> {
        T apply(Txn t, Session s) throws KeeperException;
    }

    /** One write request: one zxid whether it succeeds or fails (ZooKeeper logs an error transaction). */
    private <T> T write(long session, Body<T> body) throws KeeperException {
        requests++;
        Session s = session(session);
        Txn t = new Txn(++zxid, now());
        T result;
        try {
            result = body.apply(t, s);
        } catch (KeeperException e) {
            t.rollback();
            throw e;
        }
        t.fire();
        return result;
    }

    private Created doCreate(Txn t, Session s, String path, byte[] data, List<ACL> acl, CreateMode mode) throws KeeperException {
        List<ACL> fixed = fixupAcl(path, s.auth, acl);
        String parentPath = parentOf(path);
        Node parent = nodes.get(parentPath);
        if (parent == null) {
            throw KeeperException.create(Code.NONODE, path);
        }
        checkAcl(parent.acl, Perms.CREATE, s, path);
        String actual = mode.isSequential() ? path + String.format(Locale.ROOT, "%010d", parent.cversion) : path;
        if (nodes.containsKey(actual)) {
            throw KeeperException.create(Code.NODEEXISTS, actual);
        }
        if (parent.ephemeralOwner != 0 && parent.ephemeralOwner != CONTAINER_OWNER) {
            throw KeeperException.create(Code.NOCHILDRENFOREPHEMERALS, actual);
        }
        long owner = mode.isEphemeral() ? s.id : mode.isContainer() ? CONTAINER_OWNER : 0;
        Node n = new Node(actual, data == null ? new byte[0] : data.clone(), List.copyOf(fixed), t.zxid, t.time, owner);
        t.save(parent);
        nodes.put(actual, n);
        t.undo.add(() -> nodes.remove(actual));
        parent.children.add(actual.substring(actual.lastIndexOf('/') + 1));
        parent.cversion++;
        parent.pzxid = t.zxid;
        if (mode.isEphemeral()) {
            s.ephemerals.add(actual);
            t.undo.add(() -> s.ephemerals.remove(actual));
        }
        t.trigger(EventType.NodeCreated, actual);
        t.trigger(EventType.NodeChildrenChanged, parentPath);
        return new Created(actual, n.stat());
    }

    private void doDelete(Txn t, Session s, String path, int version) throws KeeperException {
        if (path.equals("/")) {
            throw KeeperException.create(Code.BADARGUMENTS, path);
        }
        Node parent = nodes.get(parentOf(path));
        if (parent == null) {
            throw KeeperException.create(Code.NONODE, path);
        }
        checkAcl(parent.acl, Perms.DELETE, s, path);
        Node n = existing(path);
        checkVersion(n.version, version, path);
        if (!n.children.isEmpty()) {
            throw KeeperException.create(Code.NOTEMPTY, path);
        }
        removeNode(t, n, parent);
    }

    private void removeNode(Txn t, Node n, Node parent) {
        t.save(parent);
        nodes.remove(n.path);
        t.undo.add(() -> nodes.put(n.path, n));
        parent.children.remove(n.path.substring(n.path.lastIndexOf('/') + 1));
        parent.pzxid = Math.max(parent.pzxid, t.zxid);
        Session owner = n.ephemeralOwner == 0 || n.ephemeralOwner == CONTAINER_OWNER ? null : sessions.get(n.ephemeralOwner);
        if (owner != null && owner.ephemerals.remove(n.path)) {
            t.undo.add(() -> owner.ephemerals.add(n.path));
        }
        t.trigger(EventType.NodeDeleted, n.path);
        t.trigger(EventType.NodeChildrenChanged, parent.path);
    }

    private Stat doSetData(Txn t, Session s, String path, byte[] data, int version) throws KeeperException {
        Node n = existing(path);
        checkAcl(n.acl, Perms.WRITE, s, path);
        checkVersion(n.version, version, path);
        t.save(n);
        n.data = data == null ? new byte[0] : data.clone();
        n.version++;
        n.mzxid = t.zxid;
        n.mtime = t.time;
        t.trigger(EventType.NodeDataChanged, path);
        return n.stat();
    }

    private Stat doSetAcl(Txn t, Session s, String path, List<ACL> acl, int aclVersion) throws KeeperException {
        List<ACL> fixed = fixupAcl(path, s.auth, acl);
        Node n = existing(path);
        checkAcl(n.acl, Perms.ADMIN, s, path);
        checkVersion(n.aversion, aclVersion, path);
        t.save(n);
        n.acl = List.copyOf(fixed);
        n.aversion++;
        return n.stat();
    }

    // ---- rules ------------------------------------------------------------------------------------

    private Node existing(String path) throws KeeperException {
        Node n = nodes.get(path);
        if (n == null) {
            throw KeeperException.create(Code.NONODE, path);
        }
        return n;
    }

    private Session session(long id) throws KeeperException {
        Session s = sessions.get(id);
        if (s == null) {
            throw KeeperException.create(Code.SESSIONEXPIRED);
        }
        return s;
    }

    private static void checkVersion(int current, int expected, String path) throws KeeperException {
        if (expected != -1 && expected != current) {
            throw KeeperException.create(Code.BADVERSION, path);
        }
    }

    private static void checkAcl(List<ACL> acl, int perm, Session s, String path) throws KeeperException {
        if (!permitted(acl, perm, s.auth)) {
            throw KeeperException.create(Code.NOAUTH, path);
        }
    }

    /** ZooKeeperServer.checkACL: whether one of {@code ids} holds one of {@code perm}'s bits. */
    static boolean permitted(List<ACL> acl, int perm, List<Id> ids) {
        if (acl == null || acl.isEmpty()) {
            return true;
        }
        for (Id id : ids) {
            if (id.getScheme().equals("super")) {
                return true;
            }
        }
        for (ACL a : acl) {
            if ((a.getPerms() & perm) == 0) {
                continue;
            }
            Id id = a.getId();
            if (id.getScheme().equals("world") && id.getId().equals("anyone")) {
                return true;
            }
            for (Id authId : ids) {
                if (authId.getScheme().equals(id.getScheme()) && authId.getId().equals(id.getId())) {
                    return true;
                }
            }
        }
        return false;
    }

    /** PrepRequestProcessor.fixupACL: duplicates dropped, {@code auth} expanded, ids validated. */
    static List<ACL> fixupAcl(String path, List<Id> auth, List<ACL> acl) throws KeeperException {
        if (acl == null || acl.isEmpty()) {
            throw KeeperException.create(Code.INVALIDACL, path);
        }
        List<ACL> unique = new ArrayList<>();
        for (ACL a : acl) {
            if (!unique.contains(a)) {
                unique.add(a);
            }
        }
        List<ACL> out = new ArrayList<>();
        for (ACL a : unique) {
            Id id = a.getId();
            if (id == null || id.getScheme() == null) {
                throw KeeperException.create(Code.INVALIDACL, path);
            }
            if (id.getScheme().equals("world") && "anyone".equals(id.getId())) {
                out.add(a);
            } else if (id.getScheme().equals("auth")) {
                boolean any = false;
                for (Id cid : auth) {
                    if (cid.getScheme().equals("digest")) {
                        any = true;
                        out.add(new ACL(a.getPerms(), cid));
                    }
                }
                if (!any) {
                    throw KeeperException.create(Code.INVALIDACL, path);
                }
            } else if (id.getScheme().equals("digest") && id.getId() != null && id.getId().split(":").length == 2
                    || id.getScheme().equals("ip") && id.getId() != null) {
                out.add(a);
            } else {
                throw KeeperException.create(Code.INVALIDACL, path);
            }
        }
        return out;
    }

    static String parentOf(String path) {
        int slash = path.lastIndexOf('/');
        return slash == 0 ? "/" : path.substring(0, slash);
    }

    static void copy(Stat from, Stat to) {
        to.setCzxid(from.getCzxid());
        to.setMzxid(from.getMzxid());
        to.setPzxid(from.getPzxid());
        to.setCtime(from.getCtime());
        to.setMtime(from.getMtime());
        to.setVersion(from.getVersion());
        to.setCversion(from.getCversion());
        to.setAversion(from.getAversion());
        to.setEphemeralOwner(from.getEphemeralOwner());
        to.setDataLength(from.getDataLength());
        to.setNumChildren(from.getNumChildren());
    }

    // ---- state ------------------------------------------------------------------------------------

    private static final class Node {
        final String path;
        final TreeSet<String> children = new TreeSet<>();
        byte[] data;
        List<ACL> acl;
        final long czxid;
        final long ctime;
        final long ephemeralOwner;
        long mzxid;
        long pzxid;
        long mtime;
        int version;
        int cversion;
        int aversion;

        Node(String path, byte[] data, List<ACL> acl, long zxid, long time, long ephemeralOwner) {
            this.path = path;
            this.data = data;
            this.acl = acl;
            this.czxid = zxid;
            this.mzxid = zxid;
            this.pzxid = zxid;
            this.ctime = time;
            this.mtime = time;
            this.ephemeralOwner = ephemeralOwner;
        }

        Stat stat() {
            return new Stat(czxid, mzxid, ctime, mtime, version, cversion, aversion, ephemeralOwner, data.length,
                    children.size(), pzxid);
        }

        /** What restores this node's mutable state as it is now. */
        Runnable snapshot() {
            byte[] d = data;
            List<ACL> a = acl;
            long m = mzxid;
            long p = pzxid;
            long mt = mtime;
            int v = version;
            int cv = cversion;
            int av = aversion;
            List<String> c = List.copyOf(children);
            return () -> {
                data = d;
                acl = a;
                mzxid = m;
                pzxid = p;
                mtime = mt;
                version = v;
                cversion = cv;
                aversion = av;
                children.clear();
                children.addAll(c);
            };
        }
    }

    private static final class Session {
        final long id;
        final int timeoutMs;
        final List<Id> auth = new ArrayList<>();
        final TreeSet<String> ephemerals = new TreeSet<>();

        Session(long id, int timeoutMs) {
            this.id = id;
            this.timeoutMs = timeoutMs;
        }
    }

    /** One transaction: its zxid and time, how to undo it, and the watch triggers it fires when it commits. */
    private final class Txn {
        final long zxid;
        final long time;
        final List<Runnable> undo = new ArrayList<>();
        final List<Map.Entry<EventType, String>> triggers = new ArrayList<>();

        Txn(long zxid, long time) {
            this.zxid = zxid;
            this.time = time;
        }

        void save(Node n) {
            undo.add(n.snapshot());
        }

        void trigger(EventType type, String path) {
            triggers.add(Map.entry(type, path));
        }

        void rollback() {
            for (int i = undo.size() - 1; i >= 0; i--) {
                undo.get(i).run();
            }
            undo.clear();
            triggers.clear();
        }

        /** Delivers the triggers to every connected client of a live session, in client order. */
        void fire() {
            for (Map.Entry<EventType, String> e : triggers) {
                for (SimClient c : clients) {
                    if (c.connected() && sessions.containsKey(c.currentSession())) {
                        c.trigger(e.getKey(), e.getValue(), zxid);
                    }
                }
            }
        }
    }

    @Override
    public String toString() {
        return "SimZooKeeper[zxid=" + zxid + ", nodes=" + nodes.size() + ", sessions=" + Arrays.toString(
                sessions.keySet().stream().map(Long::toHexString).toArray()) + "]";
    }
}
