package dev.oncegate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's side of a namespace ({@link Operator}). Reads a key as an operator must: every
 * znode on its own, so that one unreadable record is reported beside the rest of the story
 * instead of hiding it (a worker, by contrast, stops at the first one). Every write is one of
 * {@link ScopeProtocol}'s conditional writes.
 *
 * <p>Thread-safe: stateless apart from the shared {@link NamespaceState}.
 */
final class DefaultOperator implements Operator {

    private static final Logger LOG = LoggerFactory.getLogger(DefaultOperator.class);

    static final String REPAIR_RECORD = "do not delete it: a missing history lets the next contender deliver again."
            + " Establish what happened (the executor's logs, the destination), then restore the record from a backup"
            + " or have an admin rewrite it with valid JSON (zkCli `set PATH '…'`); see deploy/RUNBOOK.md, 'A corrupt record'";
    static final String REPAIR_AUTHORIZATION = "an admin removes it (zkCli `delete PATH`) and an operator authorizes"
            + " again (`oncegate authorize`); until then contenders stop on it (fail closed) when it is for the latest scope";
    static final String REPAIR_FOREIGN = "oncegate did not write this znode and ignores it; find out who did";
    private static final int RECONCILE_RETRIES = 5;

    private final NamespaceState ns;
    private final String host;

    DefaultOperator(NamespaceState ns, String host) {
        this.ns = ns;
        this.host = host;
    }

    @Override
    public String namespace() {
        return ns.namespace;
    }

    // ---- inspect ------------------------------------------------------------------------------

    @Override
    public KeyHistory inspect(String key) throws InterruptedException {
        EffectKey.requireKeyText(key);
        return runInNamespace("read key " + key, () -> read(key));
    }

    /** The whole story of one key, never throwing for a record it cannot read. */
    private KeyHistory read(String key) throws Exception {
        CuratorFramework client = ns.client;
        String keyPath = Layout.keyPath(ns.namespace, key);
        Stat keyStat = new Stat();
        byte[] keyData;
        try {
            keyData = client.getData().storingStatIn(keyStat).forPath(keyPath);
        } catch (KeeperException.NoNodeException e) {
            return new KeyHistory(key, keyPath, false, null, List.of(), List.of(), List.of(),
                    "No contender has entered this key: a new attempt would create it and proceed as the executor of scope 0.",
                    null);
        }
        ns.observed(keyStat.getMzxid());
        List<KeyHistory.Unreadable> unreadable = new ArrayList<>();
        KeyHistory.KeyRecord record = decodeOrNote(Records::decodeKey, keyPath, keyData, unreadable);
        TreeSet<Integer> numbers = new TreeSet<>();
        boolean authorizationsZnode = false;
        for (String child : client.getChildren().forPath(keyPath)) {
            int n = Layout.scopeNumber(child);
            if (n >= 0) {
                numbers.add(n);
            } else if (child.equals(Layout.AUTHORIZATIONS)) {
                authorizationsZnode = true;
            } else {
                unreadable.add(new KeyHistory.Unreadable(keyPath + "/" + child, new byte[0],
                        "an unexpected znode under the key", REPAIR_FOREIGN));
            }
        }
        List<KeyHistory.Scope> scopes = new ArrayList<>();
        int last = numbers.isEmpty() ? -1 : numbers.last();
        for (int n = 0; n <= last; n++) {
            if (!numbers.contains(n)) {
                unreadable.add(new KeyHistory.Unreadable(Layout.scope(keyPath, n), new byte[0],
                        "scope " + n + " is missing below scope " + last, REPAIR_RECORD));
                continue;
            }
            scopes.add(readScope(keyPath, n, unreadable));
        }
        if (last < 0) {
            unreadable.add(new KeyHistory.Unreadable(Layout.scope(keyPath, 0), new byte[0], "the key has no scope 0",
                    REPAIR_RECORD));
        }
        List<KeyHistory.Authorization> authorizations = new ArrayList<>();
        if (authorizationsZnode) {
            readAuthorizations(keyPath, scopes, authorizations, unreadable);
        } else {
            unreadable.add(new KeyHistory.Unreadable(Layout.authorizations(keyPath), new byte[0],
                    "the key has no authorizations znode", REPAIR_RECORD));
        }
        KeyHistory.Scope latest = scopes.isEmpty() ? null : scopes.get(scopes.size() - 1);
        String command = latest != null && latest.state() != null && latest.state().consumed()
                ? "create " + Layout.authorization(keyPath, latest.scope()) + " '{\"by\":\"<you>\",\"reason\":\"<why>\"}'"
                : null;
        return new KeyHistory(key, keyPath, true, record, scopes, authorizations, unreadable,
                nextAttempt(latest, last, authorizations, unreadable), command);
    }

    /**
     * The record {@code decoder} reads from {@code data} at {@code path}, or null when it cannot be
     * read: the problem is then noted in {@code unreadable}, with the repair of a damaged record.
     */
    private static <T> T decodeOrNote(BiFunction<String, byte[], T> decoder, String path, byte[] data,
                                      List<KeyHistory.Unreadable> unreadable) {
        try {
            return decoder.apply(path, data);
        } catch (UnreadableRecordException e) {
            unreadable.add(new KeyHistory.Unreadable(path, data, e.problem(), REPAIR_RECORD));
            return null;
        }
    }

    private KeyHistory.Scope readScope(String keyPath, int n, List<KeyHistory.Unreadable> unreadable) throws Exception {
        CuratorFramework client = ns.client;
        String scopePath = Layout.scope(keyPath, n);
        int problems = unreadable.size();
        Stat stat = new Stat();
        byte[] data = client.getData().storingStatIn(stat).forPath(scopePath);
        ns.observed(stat.getMzxid());
        Records.Scope scope = decodeOrNote(Records::decodeScope, scopePath, data, unreadable);
        List<String> armedChildren = new ArrayList<>();
        boolean outcomeZnode = false;
        for (String child : client.getChildren().forPath(scopePath)) {
            if (child.startsWith(Layout.ARMED_PREFIX)) {
                armedChildren.add(child);
            } else if (child.equals(Layout.OUTCOME)) {
                outcomeZnode = true;
            } else if (!child.equals(Layout.LATCH)) {
                unreadable.add(new KeyHistory.Unreadable(scopePath + "/" + child, new byte[0],
                        "an unexpected znode under the scope", REPAIR_FOREIGN));
            }
        }
        KeyHistory.Armed armed = null;
        String expectedArmed = scope != null && scope.armed() ? Layout.ARMED_PREFIX + scope.lease().holder().attempt() : null;
        for (String child : armedChildren) {
            String path = scopePath + "/" + child;
            if (!child.equals(expectedArmed)) {
                unreadable.add(new KeyHistory.Unreadable(path, bytes(path), expectedArmed == null
                        ? "an armed record, but the scope does not say armed" : "an armed record of another attempt than"
                        + " the scope's holder: two executors armed this scope?", REPAIR_RECORD));
                continue;
            }
            armed = decodeOrNote(Records::decodeArmed, path, bytes(path), unreadable);
        }
        if (expectedArmed != null && !armedChildren.contains(expectedArmed)) {
            unreadable.add(new KeyHistory.Unreadable(scopePath + "/" + expectedArmed, new byte[0],
                    "the scope says armed by attempt " + scope.lease().holder().attempt() + " but that armed record is missing",
                    REPAIR_RECORD));
        }
        KeyHistory.OutcomeRecord outcome = null;
        if (outcomeZnode) {
            String path = Layout.outcome(scopePath);
            byte[] bytes = bytes(path);
            outcome = decodeOrNote(Records::decodeOutcome, path, bytes, unreadable);
            if (outcome != null && scope != null && !scope.armed() && outcome.outcome() != Outcome.NOT_SENT) {
                unreadable.add(new KeyHistory.Unreadable(path, bytes, "an outcome other than not_sent on a scope"
                        + " never armed", REPAIR_RECORD));
            }
        }
        KeyHistory.Reconciliation reconciliation = null;
        String reconciliationPath = Layout.reconciliation(keyPath, n);
        byte[] reconciliationBytes = null;
        try {
            reconciliationBytes = client.getData().forPath(reconciliationPath);
        } catch (KeeperException.NoNodeException none) {
            // the usual case
        }
        boolean reconciliationZnode = reconciliationBytes != null;
        if (reconciliationZnode) {
            reconciliation = decodeOrNote(Records::decodeReconciliation, reconciliationPath, reconciliationBytes, unreadable);
        }
        if (scope != null && scope.reconciled() != reconciliationZnode) {
            unreadable.add(new KeyHistory.Unreadable(scopePath, data, scope.reconciled()
                    ? "the scope says reconciled but has no reconciliation record"
                    : "a reconciliation record, but the scope does not say reconciled", REPAIR_RECORD));
        }
        ScopeState state = unreadable.size() > problems || scope == null ? null
                : new ScopeView(n, scopePath, scope, stat.getVersion(), stat.getMzxid(), armed, outcome, reconciliation).state();
        return new KeyHistory.Scope(n, scopePath, state, stat.getVersion(), stat.getMzxid(),
                scope == null ? null : scope.opened(), scope == null ? null : scope.at(), scope == null ? null : scope.lease(),
                armed, outcome, reconciliation);
    }

    private void readAuthorizations(String keyPath, List<KeyHistory.Scope> scopes, List<KeyHistory.Authorization> out,
                                    List<KeyHistory.Unreadable> unreadable) throws Exception {
        String authPath = Layout.authorizations(keyPath);
        List<String> names = new ArrayList<>(ns.client.getChildren().forPath(authPath));
        names.sort(null);
        for (String name : names) {
            if (name.startsWith(Layout.RECONCILED_PREFIX) && Layout.scopeNumber(name.substring(Layout.RECONCILED_PREFIX.length()))
                    < scopes.size()) {
                continue; // a reconciliation: read with its scope
            }
            String path = authPath + "/" + name;
            Stat stat = new Stat();
            byte[] data;
            try {
                data = ns.client.getData().storingStatIn(stat).forPath(path);
            } catch (KeeperException.NoNodeException gone) {
                continue; // removed meanwhile
            }
            int after = Layout.authorizedAfter(name);
            AuthorizationView view;
            try {
                view = AuthorizationView.present(path, after, stat, Records.decodeAuthorization(path, data));
            } catch (UnreadableRecordException e) {
                view = AuthorizationView.unreadable(path, after, stat, e.problem());
                unreadable.add(new KeyHistory.Unreadable(path, data, e.problem(), REPAIR_AUTHORIZATION));
            }
            KeyHistory.AuthorizationStatus status = status(name, view, scopes);
            Records.Authorization a = view.record();
            out.add(new KeyHistory.Authorization(name, path, after, status, a == null ? null : a.by(),
                    a == null ? null : a.reason(), Instant.ofEpochMilli(stat.getCtime()), a == null ? null : a.actor(),
                    status == KeyHistory.AuthorizationStatus.USED ? after + 1 : -1));
        }
    }

    /** What an authorization does now; see {@link KeyHistory.AuthorizationStatus}. */
    private static KeyHistory.AuthorizationStatus status(String name, AuthorizationView auth, List<KeyHistory.Scope> scopes) {
        int after = auth.after();
        if (after < 0) {
            return KeyHistory.AuthorizationStatus.IGNORED;
        }
        if (auth.presence() == AuthorizationView.Presence.UNREADABLE) {
            return KeyHistory.AuthorizationStatus.UNREADABLE;
        }
        if (after + 1 < scopes.size() && name.equals(scopes.get(after + 1).opened())) {
            return KeyHistory.AuthorizationStatus.USED;
        }
        if (after >= scopes.size()) {
            return KeyHistory.AuthorizationStatus.PREMATURE;
        }
        KeyHistory.Scope scope = scopes.get(after);
        boolean latest = after == scopes.size() - 1;
        if (auth.honours(scope.scope(), scope.state(), scope.mzxid())) {
            return latest ? KeyHistory.AuthorizationStatus.UNUSED : KeyHistory.AuthorizationStatus.STALE;
        }
        return latest || auth.czxid() <= scope.mzxid() ? KeyHistory.AuthorizationStatus.PREMATURE
                : KeyHistory.AuthorizationStatus.STALE;
    }

    /** What a new attempt would do now, and why: the contention rules, said in words. */
    private static String nextAttempt(KeyHistory.Scope latest, int last, List<KeyHistory.Authorization> authorizations,
                                      List<KeyHistory.Unreadable> unreadable) {
        if (latest == null || latest.scope() != last || latest.state() == null) {
            String where = unreadable.isEmpty() ? "the key's scopes" : unreadable.get(0).path();
            return "A new attempt would stop unavailable (exit 13): " + where + " cannot be read"
                    + (unreadable.isEmpty() ? "" : " (" + unreadable.get(0).problem() + ")")
                    + "; workers fail closed on this key until an operator repairs the record.";
        }
        int n = latest.scope();
        for (KeyHistory.Authorization a : authorizations) {
            if (a.after() == n && a.status() == KeyHistory.AuthorizationStatus.UNREADABLE && latest.state().consumed()) {
                return "A new attempt would stop unavailable (exit 13): the redelivery authorization " + a.path()
                        + " cannot be read; an admin must remove it and an operator authorize again.";
            }
            if (a.after() == n && a.status() == KeyHistory.AuthorizationStatus.UNUSED) {
                return "Scope " + n + " is " + latest.state().wireName() + ", but " + a.by() + " authorized a redelivery ("
                        + a.reason() + "): a new attempt would open scope " + (n + 1) + " with it and proceed.";
            }
        }
        KeyHistory.Lease lease = latest.lease();
        return switch (latest.state()) {
            case OPEN -> "Scope " + n + " is open (" + latest.opened() + "): a new attempt would join its election and,"
                    + " elected, proceed as its executor.";
            case LEASED -> lease.expires().isAfter(Instant.now())
                    ? "Task " + lease.holder().task() + " (host " + lease.holder().host() + ", pid " + lease.holder().pid()
                    + ") holds the lease of scope " + n + " until " + lease.expires() + ": a new attempt would stop busy"
                    + " (exit 12), or with --wait wait for that executor's final decision."
                    : "The lease of scope " + n + " held by task " + lease.holder().task() + " lapsed at " + lease.expires()
                    + ": a new attempt would take it over (fencing that executor) and proceed.";
            case ARMED -> "Task " + latest.armed().by().task() + " armed scope " + n + " at " + latest.armed().at()
                    + " and recorded no outcome (it may still be delivering, or it died): a new attempt would stop unknown"
                    + " (exit 11). If the destination shows the delivery, reconcile it (`oncegate reconcile`); if it"
                    + " shows none and it must go out, authorize one redelivery (`oncegate authorize`).";
            case SENT_VERIFIED -> "Scope " + n + (latest.reconciliation() != null
                    ? " was reconciled as delivered by " + latest.reconciliation().by() + " (" + latest.reconciliation().evidence() + ")"
                    : " was delivered and verified by task " + latest.outcome().by().task() + " at " + latest.outcome().at()
                    + " (" + latest.outcome().detail() + ")")
                    + ": a new attempt would stop sent (exit 10); only an operator's authorization for scope " + n
                    + " opens another delivery.";
            case SEND_STATUS_UNKNOWN -> "Scope " + n + " ended with its outcome unknown (task " + latest.outcome().by().task()
                    + ": " + latest.outcome().detail() + "): a new attempt would stop unknown (exit 11). If the destination"
                    + " shows the delivery, reconcile it (`oncegate reconcile`); if it shows none and it must go out,"
                    + " authorize one redelivery (`oncegate authorize`).";
            case NOT_SENT -> "Scope " + n + " proved not_sent but the scope after it is missing: a new attempt would stop"
                    + " unavailable (exit 13) until an operator repairs the key.";
        };
    }

    private byte[] bytes(String path) throws Exception {
        try {
            return ns.client.getData().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return new byte[0];
        }
    }

    // ---- list ---------------------------------------------------------------------------------

    @Override
    public ListReport list(ListQuery query, Consumer<KeySummary> each) throws InterruptedException {
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(each, "each");
        return runInNamespace("list keys", () -> {
            Instant cutoff = query.olderThan() == null ? null : ns.clock.instant().minus(query.olderThan());
            int[] counts = new int[3];
            walk(key -> {
                KeyHistory h = read(key);
                counts[0]++;
                if (!h.readable()) {
                    counts[2]++;
                }
                KeySummary summary = summary(h);
                ScopeState state = summary.state();
                boolean stateMatches = query.state() == null || state == query.state()
                        || query.state() == ScopeState.SEND_STATUS_UNKNOWN && state == ScopeState.ARMED;
                boolean oldEnough = cutoff == null || summary.since() != null && summary.since().isBefore(cutoff);
                // An unreadable key may be in any state for any time: no filter may hide it.
                if (!h.readable() || stateMatches && oldEnough) {
                    each.accept(summary);
                    counts[1]++;
                }
                return query.limit() == 0 || counts[1] < query.limit();
            });
            return new ListReport(counts[0], counts[1], counts[2]);
        });
    }

    private static KeySummary summary(KeyHistory h) {
        KeyHistory.Scope latest = h.scopes().isEmpty() ? null : h.scopes().get(h.scopes().size() - 1);
        int unused = (int) h.authorizations().stream()
                .filter(a -> a.status() == KeyHistory.AuthorizationStatus.UNUSED).count();
        if (!h.readable()) {
            return new KeySummary(h.key(), h.path(), null, h.scopes().size(), null, h.record(),
                    h.unreadable().get(0).path() + ": " + h.unreadable().get(0).problem(), unused, h.unreadable().size());
        }
        return new KeySummary(h.key(), h.path(), h.state(), h.scopes().size(), since(latest), h.record(), null, unused, 0);
    }

    /** When a scope entered its state. */
    private static Instant since(KeyHistory.Scope s) {
        if (s == null) {
            return null;
        }
        if (s.reconciliation() != null) {
            return s.reconciliation().at();
        }
        if (s.outcome() != null) {
            return s.outcome().at();
        }
        if (s.armed() != null) {
            return s.armed().at();
        }
        return s.openedAt();
    }

    /** Visits every key, bucket by bucket in order, until {@code visit} says stop. */
    private void walk(KeyVisitor visit) throws Exception {
        String keys = Layout.keys(ns.namespace);
        for (String b1 : sortedChildren(keys)) {
            for (String b2 : sortedChildren(keys + "/" + b1)) {
                for (String key : sortedChildren(keys + "/" + b1 + "/" + b2)) {
                    if (!visit.visit(key)) {
                        return;
                    }
                }
            }
        }
    }

    @FunctionalInterface
    private interface KeyVisitor {
        boolean visit(String key) throws Exception;
    }

    private List<String> sortedChildren(String path) throws Exception {
        try {
            List<String> names = new ArrayList<>(ns.client.getChildren().forPath(path));
            names.sort(null);
            return names;
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    // ---- checkup --------------------------------------------------------------------------------

    @Override
    public Checkup checkup(String digestId) throws InterruptedException {
        return run("check namespace " + ns.namespace, () -> NamespaceCheckup.run(ns, digestId));
    }

    // ---- authorize ------------------------------------------------------------------------------

    @Override
    public Authorized authorize(String key, String by, String reason) throws InterruptedException {
        EffectKey.requireKeyText(key);
        requireText("by", by, "must name who authorizes the redelivery");
        requireText("reason", reason, "must say why a new delivery is justified");
        return runInNamespace("authorize a redelivery of key " + key, () -> {
            KeyHistory before = read(key);
            int n = consumedLatest(before, "authorize");
            Records.Authorization record = new Records.Authorization(by, reason, ns.clock.instant(), actor());
            String keyPath = Layout.keyPath(ns.namespace, key);
            ScopeProtocol.Authorizing done = ns.protocol.authorize(keyPath, n, record);
            String name = Layout.AFTER_PREFIX + n;
            KeyHistory.Authorization now = read(key).authorizations().stream().filter(a -> a.name().equals(name))
                    .findFirst().orElse(null);
            KeyHistory.AuthorizationStatus status = now == null ? KeyHistory.AuthorizationStatus.UNREADABLE : now.status();
            if (done.created()) {
                LOG.info("oncegate namespace {}: {} authorized a redelivery of key {} after scope {}: {}",
                        ns.namespace, by, key, n, reason);
                return new Authorized(done.path(), n, true, by, reason, status);
            }
            Records.Authorization existing = done.existing().record();
            return new Authorized(done.path(), n, false, existing == null ? null : existing.by(),
                    existing == null ? null : existing.reason(), status);
        });
    }

    /** The latest scope's number, when the key exists, reads, and is consumed; else IllegalArgumentException. */
    private int consumedLatest(KeyHistory h, String verb) {
        if (!h.exists()) {
            throw new IllegalArgumentException("key " + h.key() + " does not exist in " + ns.namespace
                    + ": nothing was ever attempted for it, so there is nothing to " + verb);
        }
        ScopeState state = h.state();
        int n = h.scopes().size() - 1;
        if (state == null) {
            throw new IllegalArgumentException("key " + h.key() + " cannot be read (" + h.unreadable().get(0).path() + ": "
                    + h.unreadable().get(0).problem() + "): repair it first (`oncegate inspect`)");
        }
        if (!state.consumed()) {
            throw new IllegalArgumentException("key " + h.key() + " is " + state.wireName() + " in scope " + n
                    + ", not consumed (sent_verified, send_status_unknown, or armed without outcome): nothing to " + verb);
        }
        return n;
    }

    // ---- reconcile ------------------------------------------------------------------------------

    @Override
    public Reconciled reconcile(String key, String by, String evidence) throws InterruptedException {
        EffectKey.requireKeyText(key);
        requireText("by", by, "must name who checked the destination");
        requireText("evidence", evidence, "must say what the destination showed");
        return runInNamespace("reconcile key " + key, () -> {
            String keyPath = Layout.keyPath(ns.namespace, key);
            for (int round = 0; round < RECONCILE_RETRIES; round++) {
                KeyHistory h = read(key);
                int n = consumedLatest(h, "reconcile");
                KeyHistory.Scope latest = h.scopes().get(n);
                if (latest.reconciliation() != null) {
                    return new Reconciled(Layout.reconciliation(keyPath, n), n, false, latest.reconciliation());
                }
                if (latest.state() == ScopeState.SENT_VERIFIED) {
                    throw new IllegalArgumentException("key " + key + " scope " + n + " is sent_verified already: nothing"
                            + " to reconcile");
                }
                ScopeView view = ns.protocol.readScope(keyPath, n, null);
                KeyHistory.Reconciliation reconciliation = new KeyHistory.Reconciliation(Outcome.SENT_VERIFIED, by, evidence,
                        actor(), ns.clock.instant());
                if (ns.protocol.reconcile(view, reconciliation)) {
                    LOG.info("oncegate namespace {}: {} reconciled key {} scope {} as sent_verified: {}",
                            ns.namespace, by, key, n, evidence);
                    return new Reconciled(Layout.reconciliation(keyPath, n), n, true, reconciliation);
                }
            }
            throw new OncegateException("key " + key + " kept changing while it was being reconciled; try again");
        });
    }

    // ---- gc -------------------------------------------------------------------------------------

    @Override
    public GcReport gc(Duration olderThan, boolean dryRun, Consumer<GcEntry> each) throws InterruptedException {
        BuilderChecks.atLeast("olderThan", olderThan, Duration.ZERO);
        Objects.requireNonNull(each, "each");
        return runInNamespace("remove consumed keys", () -> {
            Instant cutoff = ns.clock.instant().minus(olderThan);
            int[] counts = new int[3];
            walk(key -> {
                counts[0]++;
                KeyHistory h = read(key);
                KeyHistory.Scope latest = h.scopes().isEmpty() ? null : h.scopes().get(h.scopes().size() - 1);
                ScopeState state = h.state();
                Instant since = since(latest);
                boolean terminal = state == ScopeState.SENT_VERIFIED || state == ScopeState.SEND_STATUS_UNKNOWN;
                if (!terminal || since == null || !since.isBefore(cutoff)) {
                    if (!h.readable() && since != null && since.isBefore(cutoff)) {
                        counts[2]++;
                        each.accept(new GcEntry(key, h.path(), state, since, false, "unreadable: " + h.unreadable().get(0).problem()));
                    }
                    return true;
                }
                if (dryRun) {
                    counts[1]++;
                    each.accept(new GcEntry(key, h.path(), state, since, false, null));
                    return true;
                }
                List<String> paths = subtree(h.path());
                if (paths == null || !ns.protocol.deleteKey(latest.path(), latest.version(), paths)) {
                    counts[2]++;
                    each.accept(new GcEntry(key, h.path(), state, since, false, paths == null
                            ? "someone is in an election under it" : "it changed while being removed"));
                    return true;
                }
                counts[1]++;
                LOG.info("oncegate namespace {}: removed key {} ({} since {}): it is open again", ns.namespace, key,
                        state.wireName(), since);
                each.accept(new GcEntry(key, h.path(), state, since, true, null));
                return true;
            });
            return new GcReport(counts[0], counts[1], counts[2], dryRun);
        });
    }

    /** Every znode of the key, children first, the key last; null when an election node is live under it. */
    private List<String> subtree(String keyPath) throws Exception {
        List<String> out = new ArrayList<>();
        for (String child : ns.client.getChildren().forPath(keyPath)) {
            String path = keyPath + "/" + child;
            for (String grandchild : ns.client.getChildren().forPath(path)) {
                String g = path + "/" + grandchild;
                if (!ns.client.getChildren().forPath(g).isEmpty()) {
                    return null; // a latch container with election nodes in it
                }
                out.add(g);
            }
            out.add(path);
        }
        out.add(keyPath);
        return out;
    }

    // ---- access control -----------------------------------------------------------------------

    /**
     * How many passes {@link #applyRoles} makes at most. A pass after the first only meets znodes
     * created during the one before by an attempt that read the genesis before its rewrite: a
     * handful, so the second or third pass finds none. A znode with a stale ACL in every pass is a
     * writer that does not follow the roles epoch (an oncegate before it, a script).
     */
    static final int ROLE_PASSES = 5;

    /**
     * {@inheritDoc}
     *
     * <p>In this order, so that nothing created meanwhile keeps a stale ACL: (1) {@code setData
     * NS/genesis} with the new roles, at the version read (a concurrent {@code acl} fails it): its
     * new version is the new roles epoch, so from here on a key-creation multi with older ACLs fails
     * its epoch check and is sent again with these; (2) passes over the namespace ({@link AclWalk}),
     * each setting the role ACL of every znode whose ACL differs, until a pass finds no persistent
     * znode to change (ephemeral election nodes take their ACL from their client's ACL provider and
     * go with its session: they are set, but do not hold the passes back); (3) the genesis' own ACL.
     * The client keeps READ and ADMIN throughout: it is the old admin (whose ACLs the znodes not yet
     * passed carry) and the new one (whose ACLs the others carry).
     */
    @Override
    public long applyRoles(Genesis.Roles roles, Consumer<String> each) throws InterruptedException {
        Objects.requireNonNull(roles, "roles");
        Objects.requireNonNull(each, "each");
        return runInNamespace("apply the role ACLs", () -> {
            Acls acls = Acls.of(roles);
            String genesisPath = Layout.genesis(ns.namespace);
            int epoch = nameRoles(genesisPath, roles);
            long[] changed = {0};
            long[] stale = {0}; // persistent znodes changed in this pass
            List<String> examples = new ArrayList<>();
            int pass = 0;
            do {
                if (++pass > ROLE_PASSES) {
                    throw new OncegateException("could not apply the role ACLs: after " + ROLE_PASSES + " passes, znodes"
                            + " still appear with other ACLs (" + stale[0] + " in the last pass, such as "
                            + String.join(", ", examples) + "): something keeps"
                            + " creating them without following the roles epoch (a worker of an oncegate release before"
                            + " it, a script). Stop or upgrade it, run `oncegate acl` again, and check with `oncegate doctor`");
                }
                stale[0] = 0;
                examples.clear();
                AclWalk.walk(ns.client, ns.namespace, acls, genesisPath::equals, true, new AclWalk.Visitor() {
                    @Override
                    public void differs(String path, List<ACL> actual, Stat stat, List<ACL> expected) {
                        changed[0]++;
                        each.accept(path);
                        if (stat.getEphemeralOwner() == 0 && stale[0]++ < 3) {
                            examples.add(path);
                        }
                    }

                    @Override
                    public void unreadable(String path) throws KeeperException {
                        throw KeeperException.create(KeeperException.Code.NOAUTH, path);
                    }
                });
            } while (stale[0] > 0);
            if (!Acls.same(ns.client.getACL().forPath(genesisPath), acls.forKind(Layout.Kind.GENESIS))) {
                ns.client.setACL().withACL(acls.forKind(Layout.Kind.GENESIS)).forPath(genesisPath);
                changed[0]++;
                each.accept(genesisPath);
            }
            LOG.info("oncegate namespace {}: roles epoch {} (worker {}, operator {}, admin {}): {} znodes given their role"
                            + " ACL in {} passes", ns.namespace, epoch, user(roles.worker()), user(roles.operator()),
                    user(roles.admin()), changed[0], pass);
            return changed[0];
        });
    }

    /**
     * {@code setData NS/genesis} naming {@code roles}, at the version just read and only in the
     * namespace life this operator works in.
     *
     * @return the genesis' new version: the new roles epoch
     */
    private int nameRoles(String genesisPath, Genesis.Roles roles) throws Exception {
        Stat stat = new Stat();
        Genesis genesis = Records.decodeGenesis(genesisPath, ns.client.getData().storingStatIn(stat).forPath(genesisPath));
        Decision.StopUnavailable replaced = ns.checkGenesis(java.util.Optional.of(genesis));
        if (replaced != null) {
            throw new StopException(replaced);
        }
        try {
            return ns.client.setData().withVersion(stat.getVersion())
                    .forPath(genesisPath, Records.genesis(new Genesis(genesis.id(), genesis.created(), roles))).getVersion();
        } catch (KeeperException.BadVersionException e) {
            throw new OncegateException("could not apply the role ACLs: " + genesisPath + " changed while it was being"
                    + " rewritten (another `oncegate acl` at the same time?): nothing was changed; run it again", e);
        }
    }

    private static String user(String digestId) {
        return digestId.substring(0, digestId.indexOf(':'));
    }

    // ---- plumbing -------------------------------------------------------------------------------

    /** Who an operator command is, for the records it writes. */
    private Actor actor() throws Exception {
        long session = ns.client.getZookeeperClient().getZooKeeper().getSessionId();
        return new Actor("oncegate", host, ProcessHandle.current().pid(), Long.toHexString(session), Records.newAttemptId());
    }

    private static void requireText(String field, String value, String what) {
        Objects.requireNonNull(value, field);
        if (value.isBlank()) {
            throw new IllegalArgumentException(field + ": " + what);
        }
        Records.requireWellFormed(field, value);
    }

    @FunctionalInterface
    private interface Work<T> {
        T call() throws Exception;
    }

    /** {@link #run} in a namespace whose genesis is checked first: no operator work in an unknown or replaced namespace. */
    private <T> T runInNamespace(String what, Work<T> work) throws InterruptedException {
        return run(what, () -> {
            ns.requireGenesis();
            return work.call();
        });
    }

    /** Runs operator work: bad input and namespace stops pass through, ZooKeeper trouble becomes one exception that says what to do. */
    private <T> T run(String what, Work<T> work) throws InterruptedException {
        try {
            return work.call();
        } catch (InterruptedException | RuntimeException e) {
            throw e;
        } catch (KeeperException.NoAuthException e) {
            throw new OncegateException("could not " + what + ": permission denied at " + e.getPath()
                    + " (this identity's role may not do that: check --auth / the client's credentials)", e);
        } catch (Exception e) {
            throw new OncegateException("could not " + what + ": " + e
                    + " (check that ZooKeeper is reachable and this identity may read the namespace)", e);
        }
    }
}
