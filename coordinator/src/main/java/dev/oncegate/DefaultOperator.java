package dev.oncegate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;

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
    static final String REPAIR_FORGED_SCOPE = "contenders stop on this key: establish who created the scope (the worker"
            + " credential may create it; see the README's 'Threat model'), what was delivered, then have an admin remove"
            + " the scopes above the last legitimate one and, if a delivery is due, an operator authorize it";
    private static final int RECONCILE_RETRIES = 5;
    /** How far a record's own time may be from the server's time of its znode before retention keeps it. */
    static final Duration RECORD_CLOCK_BOUND = Duration.ofMinutes(10);

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
        String keyPath = Layout.keyPath(ns.namespace, key);
        Stat keyStat = new Stat();
        byte[] keyData;
        try {
            keyData = ns.zk.getData(keyPath, keyStat, null);
        } catch (KeeperException.NoNodeException e) {
            return new KeyHistory(key, keyPath, false, null, List.of(), List.of(), List.of(),
                    "No contender has entered this key: a new attempt would create it and proceed as the executor of scope 0.",
                    null, null, ns.genesisId(), 0);
        }
        ns.observed(keyStat.getMzxid());
        List<KeyHistory.Unreadable> unreadable = new ArrayList<>();
        KeyHistory.KeyRecord record = decodeOrNote(Records::decodeKey, keyPath, keyData, unreadable);
        TreeSet<Integer> numbers = new TreeSet<>();
        boolean authorizationsZnode = false;
        for (String child : ns.zk.getChildren(keyPath, null)) {
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
        List<ScopeStory> stories = new ArrayList<>();
        int last = numbers.isEmpty() ? -1 : numbers.last();
        for (int n = 0; n <= last; n++) {
            if (!numbers.contains(n)) {
                unreadable.add(new KeyHistory.Unreadable(Layout.scope(keyPath, n), new byte[0],
                        "scope " + n + " is missing below scope " + last, REPAIR_RECORD));
                continue;
            }
            stories.add(readScope(keyPath, n, unreadable));
        }
        if (last < 0) {
            unreadable.add(new KeyHistory.Unreadable(Layout.scope(keyPath, 0), new byte[0], "the key has no scope 0",
                    REPAIR_RECORD));
        }
        List<AuthorizationRecord> authorizationRecords = authorizationsZnode ? readAuthorizations(keyPath, unreadable)
                : List.of();
        if (!authorizationsZnode) {
            unreadable.add(new KeyHistory.Unreadable(Layout.authorizations(keyPath), new byte[0],
                    "the key has no authorizations znode", REPAIR_RECORD));
        }
        List<KeyHistory.Scope> scopes = checkChain(keyPath, stories, authorizationRecords, unreadable);
        List<KeyHistory.Authorization> authorizations = new ArrayList<>();
        for (AuthorizationRecord a : authorizationRecords) {
            KeyHistory.AuthorizationStatus status = status(a.name(), a.view(), scopes);
            Records.Authorization r = a.view().record();
            authorizations.add(new KeyHistory.Authorization(a.name(), a.view().path(), a.view().after(), status,
                    r == null ? null : r.by(), r == null ? null : r.reason(), a.created(), r == null ? null : r.actor(),
                    status == KeyHistory.AuthorizationStatus.USED ? a.view().after() + 1 : -1));
        }
        KeyHistory.Scope latest = scopes.isEmpty() ? null : scopes.get(scopes.size() - 1);
        String command = latest != null && latest.state() != null && latest.state().consumed()
                ? "create " + Layout.authorization(keyPath, latest.scope()) + " '{\"by\":\"<you>\",\"reason\":\"<why>\"}'"
                : null;
        ScopeView latestView = stories.isEmpty() ? null : stories.get(stories.size() - 1).view();
        AuthorizationView after = latest == null ? null : authorizationRecords.stream()
                .filter(a -> a.name().equals(Layout.AFTER_PREFIX + latest.scope())).map(AuthorizationRecord::view)
                .findFirst().orElse(null);
        NextAttempt next = nextAttempt(latest, latestView, last, after, unreadable);
        return new KeyHistory(key, keyPath, true, record, scopes, authorizations, unreadable, next.words(), next.stop(),
                command, ns.genesisId(), keyStat.getCzxid());
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

    /**
     * One scope as the operator read it: its story so far, and the view {@link Custody} judged
     * (null when a record could not be read or contradicts the protocol).
     */
    private record ScopeStory(KeyHistory.Scope scope, ScopeView view) {
    }

    /**
     * One scope, znode by znode, decoded by the one {@link ScopeDecoder} as a worker's read is, but
     * past the first contradiction: each is reported beside the rest of the story.
     */
    private ScopeStory readScope(String keyPath, int n, List<KeyHistory.Unreadable> unreadable) throws Exception {
        String scopePath = Layout.scope(keyPath, n);
        Stat stat = new Stat();
        byte[] data = ns.zk.getData(scopePath, stat, null);
        ns.observed(stat.getMzxid());
        List<String> children = ns.zk.getChildren(scopePath, null);
        boolean armedChild = children.contains(Layout.ARMED);
        ScopeDecoder.Decoded decoded = ScopeDecoder.decode(new ScopeDecoder.Raw(n, scopePath,
                new ScopeDecoder.Znode(data == null ? new byte[0] : data, stat), children,
                armedChild ? znode(Layout.armed(scopePath)) : null, armedChild ? znode(Layout.outcome(scopePath)) : null,
                children.contains(Layout.OUTCOME) ? znode(Layout.legacyOutcome(scopePath)) : null, null, false,
                znode(Layout.reconciliation(keyPath, n))), !ns.acls().on(), true, this::znode);
        for (ScopeDecoder.Contradiction c : decoded.contradictions()) {
            boolean foreign = c.kind() == ScopeDecoder.Kind.FOREIGN;
            unreadable.add(new KeyHistory.Unreadable(c.path(), foreign ? new byte[0] : c.data() != null ? c.data()
                    : bytes(c.path(), null), c.problem(), foreign ? REPAIR_FOREIGN : REPAIR_RECORD));
        }
        Custody.Facts f = decoded.facts();
        Records.Scope scope = f.data();
        Records.OutcomeData decidedBy = f.outcome() != null ? f.outcome() : f.legacyOutcome();
        Stat decided = f.reconciliation() != null ? f.reconciliationStat() : f.outcome() != null ? f.outcomeStat()
                : f.legacyOutcome() != null ? f.legacyOutcomeStat() : f.armed() != null ? f.armedStat() : null;
        Instant recordedAt = Instant.ofEpochMilli(decided == null ? stat.getMtime()
                : decided == f.outcomeStat() ? decided.getMtime() : decided.getCtime());
        KeyHistory.OutcomeRecord executorOutcome = decidedBy instanceof Records.ExecutorOutcome e ? e.outcome() : null;
        // armed/outcome is created empty with the armed record and written once (version 1); an outcome before
        // schema 4 was created with its content (version 0).
        int outcomeWrites = f.outcome() != null ? f.outcomeStat().getVersion()
                : f.legacyOutcome() != null ? f.legacyOutcomeStat().getVersion() + 1 : 0;
        KeyHistory.Scope story = new KeyHistory.Scope(n, scopePath, decoded.view() == null ? null : decoded.view().state(),
                stat.getVersion(), stat.getMzxid(), scope == null ? null : scope.opened(), scope == null ? null : scope.at(),
                scope == null ? null : scope.lease(), f.armed() == null ? null : f.armed().armed(), executorOutcome,
                f.reconciliation(), f.armed() == null ? 0 : f.armedStat().getCzxid(), recordedAt, outcomeWrites);
        return new ScopeStory(story, decoded.view());
    }

    /** {@code getData} of {@code path} for the decoder; null when it does not exist. */
    private ScopeDecoder.Znode znode(String path) throws Exception {
        Stat stat = new Stat();
        byte[] data = bytesOrNull(path, stat);
        return data == null ? null : new ScopeDecoder.Znode(data, stat);
    }

    /** One record under {@code KEY/authorizations} (reconciliations aside), as read. */
    private record AuthorizationRecord(String name, AuthorizationView view, Instant created) {
    }

    private List<AuthorizationRecord> readAuthorizations(String keyPath, List<KeyHistory.Unreadable> unreadable)
            throws Exception {
        String authPath = Layout.authorizations(keyPath);
        List<String> names = new ArrayList<>(ns.zk.getChildren(authPath, null));
        names.sort(null);
        List<AuthorizationRecord> out = new ArrayList<>();
        for (String name : names) {
            if (name.startsWith(Layout.RECONCILED_PREFIX)
                    && Layout.scopeNumber(name.substring(Layout.RECONCILED_PREFIX.length())) >= 0) {
                continue; // a reconciliation: read with its scope
            }
            String path = authPath + "/" + name;
            Stat stat = new Stat();
            byte[] data;
            try {
                data = ns.zk.getData(path, stat, null);
            } catch (KeeperException.NoNodeException gone) {
                continue; // removed meanwhile
            }
            AuthorizationView view = ScopeDecoder.authorization(path, Layout.authorizedAfter(name), stat, data);
            if (view.presence() == AuthorizationView.Presence.UNREADABLE) {
                unreadable.add(new KeyHistory.Unreadable(path, data, view.problem(), REPAIR_AUTHORIZATION));
            }
            out.add(new AuthorizationRecord(name, view, Instant.ofEpochMilli(stat.getCtime())));
        }
        return out;
    }

    /**
     * The scopes as their chain of custody allows ({@link Custody#requireOpened}): a scope not
     * legitimately opened, and every scope above it, reads unreadable (null state), as a
     * contender that met it would stop.
     */
    private List<KeyHistory.Scope> checkChain(String keyPath, List<ScopeStory> stories,
                                              List<AuthorizationRecord> authorizations,
                                              List<KeyHistory.Unreadable> unreadable) throws Exception {
        List<KeyHistory.Scope> out = new ArrayList<>();
        boolean broken = false;
        for (int i = 0; i < stories.size(); i++) {
            ScopeStory story = stories.get(i);
            if (i > 0 && !broken) {
                ScopeView previous = stories.get(i - 1).view();
                ScopeView next = story.view();
                if (previous != null && next != null) {
                    AuthorizationView after = authorizations.stream()
                            .filter(a -> a.name().equals(Layout.AFTER_PREFIX + previous.scope())).map(AuthorizationRecord::view)
                            .findFirst().orElse(null);
                    Custody.Opening opening = Custody.opening(previous, next, after);
                    try {
                        Custody.requireOpened(previous, next, opening, opening == Custody.Opening.AUTHORIZATION
                                ? ns.protocol.reads().authorizationsWeakness(keyPath) : null);
                    } catch (UnreadableRecordException e) {
                        unreadable.add(new KeyHistory.Unreadable(e.path(), new byte[0], e.problem(), REPAIR_FORGED_SCOPE));
                        broken = true;
                    }
                }
            }
            KeyHistory.Scope s = story.scope();
            out.add(broken ? new KeyHistory.Scope(s.scope(), s.path(), null, s.version(), s.mzxid(), s.opened(), s.openedAt(),
                    s.lease(), s.armed(), s.outcome(), s.reconciliation(), s.armedZxid(), s.recordedAt(), s.outcomeWrites()) : s);
        }
        return out;
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
        if (auth.honours(scope.scope(), scope.state(), scope.armedZxid())) {
            return latest ? KeyHistory.AuthorizationStatus.UNUSED : KeyHistory.AuthorizationStatus.STALE;
        }
        return latest || scope.armedZxid() == 0 || auth.czxid() <= scope.armedZxid() ? KeyHistory.AuthorizationStatus.PREMATURE
                : KeyHistory.AuthorizationStatus.STALE;
    }

    /**
     * A lease TTL for {@link #nextAttempt}'s situation: any positive one gives the same step, since a
     * contender that has just read the scope has not watched it unchanged for any time.
     */
    private static final Duration ANY_LEASE_TTL = Duration.ofSeconds(1);

    /**
     * What a new attempt would do now, in words, and the stop it would get (null when it would
     * proceed, take a lapsed lease over, or join the election): no CLI exit code here, the client
     * renders those from the stop.
     */
    record NextAttempt(String words, Decision.Stop stop) {
        NextAttempt {
            Objects.requireNonNull(words, "words");
        }

        static NextAttempt proceeds(String words) {
            return new NextAttempt(words, null);
        }
    }

    /**
     * What a new attempt would do now, and why: {@link ContentionRules#next} run on the latest scope
     * as read (with its {@code after-n} authorization), for a contender that has just read it, is in
     * no election and does not wait; the step it gives, said in words, with its stop.
     *
     * @param view  the latest scope as judged, or null when it cannot be read
     * @param after its {@code after-n} authorization as read, or null when there is none
     */
    private NextAttempt nextAttempt(KeyHistory.Scope latest, ScopeView view, int last, AuthorizationView after,
                                    List<KeyHistory.Unreadable> unreadable) throws Exception {
        if (latest == null || latest.scope() != last || latest.state() == null || view == null) {
            String where = unreadable.isEmpty() ? "the key's scopes" : unreadable.get(0).path();
            String problem = unreadable.isEmpty() ? "the key's latest scope cannot be read" : unreadable.get(0).problem();
            return new NextAttempt("A new attempt would stop unavailable: " + where + " cannot be read"
                    + (unreadable.isEmpty() ? "" : " (" + problem + ")")
                    + "; workers fail closed on this key until an operator repairs the record.",
                    new Decision.StopUnavailable(StopReason.UNREADABLE_RECORD,
                            Evidence.of(where, Math.max(last, 0), problem)));
        }
        Instant now = ns.clock.instant();
        ContentionRules.Situation situation = new ContentionRules.Situation(view,
                view.state().consumed() ? after != null ? after : AuthorizationView.absent(
                        Layout.authorization(Layout.keyOfScope(view.path()), view.scope()), view.scope()) : null,
                ContentionRules.Election.NONE, ContentionRules.Observations.NONE.observe(view, false, now), null, now, now,
                false, ANY_LEASE_TTL, false);
        // As a contender does before it opens the next scope with the authorization (DefaultAttempt.openAuthorized).
        String keyPath = Layout.keyOfScope(view.path());
        String weakness = view.state().consumed() && after != null && after.presence() == AuthorizationView.Presence.PRESENT
                ? ns.protocol.reads().authorizationsWeakness(keyPath) : null;
        return ContentionRules.next(situation).performWith(new NextAttemptInWords(latest, keyPath, weakness));
    }

    /** The step a new attempt would take on {@code latest}, said in words for {@code oncegate inspect}. */
    private record NextAttemptInWords(KeyHistory.Scope latest, String keyPath, String weakness)
            implements ContentionRules.Performer<NextAttempt> {

        @Override
        public NextAttempt stop(ContentionRules.Stop step) {
            int n = latest.scope();
            Decision.Stop stop = step.stop();
            if (stop instanceof Decision.StopSent) {
                return new NextAttempt("Scope " + n + (latest.reconciliation() != null
                        ? " was reconciled as delivered by " + latest.reconciliation().by() + " ("
                        + latest.reconciliation().evidence() + ")"
                        : " was delivered and verified by task " + latest.outcome().by().task() + " at "
                        + latest.outcome().at() + " (" + latest.outcome().detail() + ")")
                        + ": a new attempt would stop sent; only an operator's authorization for scope " + n
                        + " opens another delivery.", stop);
            }
            if (stop.reason() == StopReason.ARMED_WITHOUT_OUTCOME) {
                return new NextAttempt("Task " + latest.armed().by().task() + " armed scope " + n + " at "
                        + latest.armed().at() + " and recorded no outcome (it may still be delivering, or it died):"
                        + " a new attempt would stop unknown. If the destination shows the delivery, reconcile it"
                        + " (`oncegate reconcile`); if it shows none and it must go out, authorize one redelivery"
                        + " (`oncegate authorize --after " + n + "`).", stop);
            }
            if (stop instanceof Decision.StopUnknown) {
                return new NextAttempt("Scope " + n + " ended with its outcome unknown (task "
                        + latest.outcome().by().task() + ": " + latest.outcome().detail() + "): a new attempt would"
                        + " stop unknown. If the destination shows the delivery, reconcile it (`oncegate reconcile`);"
                        + " if it shows none and it must go out, authorize one redelivery (`oncegate authorize --after "
                        + n + "`).", stop);
            }
            if (stop instanceof Decision.StopBusy) {
                return held();
            }
            // The only other stop of the rules on a scope read whole: its after-n authorization is unreadable.
            return new NextAttempt("A new attempt would stop unavailable: the redelivery authorization "
                    + stop.evidence().path() + " cannot be read; an admin must remove it and an operator authorize"
                    + " again.", stop);
        }

        @Override
        public NextAttempt advance(ContentionRules.Advance step) {
            String next = Layout.scope(Layout.keyOfScope(latest.path()), latest.scope() + 1);
            return new NextAttempt("Scope " + latest.scope() + " proved not_sent but the scope after it is missing:"
                    + " a new attempt would stop unavailable until an operator repairs the key.",
                    new Decision.StopUnavailable(StopReason.UNREADABLE_RECORD, Evidence.of(next, latest.scope() + 1,
                            "scope " + latest.scope() + " proved not_sent but " + next + " is missing")));
        }

        @Override
        public NextAttempt openAuthorized(ContentionRules.OpenAuthorized step) {
            if (weakness != null) {
                Decision.StopUnavailable stop = DefaultAttempt.weakAuthorizations(keyPath, latest.scope(),
                        step.authorization().path(), weakness);
                return new NextAttempt("A new attempt would stop unavailable: " + stop.evidence().detail() + ".", stop);
            }
            Records.Authorization a = step.authorization().record();
            return NextAttempt.proceeds("Scope " + latest.scope() + " is " + latest.state().wireName() + ", but "
                    + a.by() + " authorized a redelivery (" + a.reason() + "): a new attempt would open scope "
                    + (latest.scope() + 1) + " with it and proceed.");
        }

        @Override
        public NextAttempt join(ContentionRules.Join step) {
            return latest.lease() == null ? open() : NextAttempt.proceeds("The lease of scope " + latest.scope()
                    + " held by task " + latest.lease().holder().task() + " lapsed at " + latest.lease().expires()
                    + ": a new attempt would take it over (fencing that executor) and proceed.");
        }

        @Override
        public NextAttempt await(ContentionRules.Wait step) {
            return open(); // the grace its creator has to join its election first
        }

        private NextAttempt held() {
            KeyHistory.Lease lease = latest.lease();
            return new NextAttempt("Task " + lease.holder().task() + " (host " + lease.holder().host() + ", pid "
                    + lease.holder().pid() + ") holds the lease of scope " + latest.scope() + " until "
                    + lease.expires() + ": a new attempt would stop busy, or with --wait wait for that executor's"
                    + " final decision.",
                    new Decision.StopBusy(StopReason.EXECUTOR_ACTIVE, new Evidence(latest.path(),
                            latest.scope(), lease.holder().task(), lease.holder().host(), null,
                            "the lease is held until " + lease.expires())));
        }

        private NextAttempt open() {
            return NextAttempt.proceeds("Scope " + latest.scope() + " is open (" + latest.opened() + "): a new attempt"
                    + " would join its election and, elected, proceed as its executor.");
        }

        // Not given to a contender outside the election that does not wait (it stops busy first).

        @Override
        public NextAttempt checkHolder(ContentionRules.CheckHolder step) {
            return held();
        }

        @Override
        public NextAttempt probeElection(ContentionRules.ProbeElection step) {
            return open();
        }

        @Override
        public NextAttempt takeLease(ContentionRules.TakeLease step) {
            return join(null);
        }
    }

    /** The bytes of {@code path} (its stat into {@code stat} when given); empty when it does not exist. */
    private byte[] bytes(String path, Stat stat) throws Exception {
        byte[] bytes = bytesOrNull(path, stat);
        return bytes == null ? new byte[0] : bytes;
    }

    /** The bytes of {@code path} (its stat into {@code stat} when given); null when it does not exist. */
    private byte[] bytesOrNull(String path, Stat stat) throws Exception {
        try {
            return stat == null ? ns.zk.getData(path, null, null) : ns.zk.getData(path, stat, null);
        } catch (KeeperException.NoNodeException e) {
            return null;
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
                KeyHistory h = readInWalk(key);
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

    // ---- the backlog index ----------------------------------------------------------------------

    @Override
    public BacklogReport backlog(ListQuery query, Consumer<KeySummary> each) throws InterruptedException {
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(each, "each");
        ScopeState wanted = query.state();
        if (wanted != null && wanted != ScopeState.ARMED && wanted != ScopeState.SEND_STATUS_UNKNOWN) {
            throw new IllegalArgumentException("state: the backlog index answers armed and send_status_unknown (or every"
                    + " backlog key), not " + wanted.wireName() + ": list walks every key for that");
        }
        return runInNamespace("read the backlog", () -> {
            if (!ns.protocol.operator().indexExists()) {
                return new BacklogReport(false, 0, 0, 0, 0, 0);
            }
            List<BacklogIndex.Kind> kinds = wanted == null ? List.of(BacklogIndex.Kind.values())
                    : wanted == ScopeState.ARMED ? List.of(BacklogIndex.Kind.ARMED, BacklogIndex.Kind.UNREADABLE)
                    : List.of(BacklogIndex.Kind.ARMED, BacklogIndex.Kind.UNKNOWN, BacklogIndex.Kind.UNREADABLE);
            java.util.Map<String, List<String>> entries = readIndex(kinds, false);
            Instant cutoff = query.olderThan() == null ? null : ns.clock.instant().minus(query.olderThan());
            int[] counts = new int[4]; // read, listed, stale, unreadable
            for (java.util.Map.Entry<String, List<String>> nominated : entries.entrySet()) {
                String key = nominated.getKey();
                KeyHistory h = readInWalk(key); // the records decide; the entry only nominated the key
                counts[0]++;
                KeySummary summary = h.exists() ? summary(h) : null;
                if (summary == null || !inBacklog(summary)) {
                    counts[2]++; // stale or forged: nothing to show
                    continue;
                }
                if (!h.readable()) {
                    counts[3]++;
                    noteUnreadable(key, nominated.getValue());
                }
                ScopeState state = summary.state();
                boolean stateMatches = wanted == null || state == wanted
                        || wanted == ScopeState.SEND_STATUS_UNKNOWN && state == ScopeState.ARMED;
                boolean oldEnough = cutoff == null || summary.since() != null && summary.since().isBefore(cutoff);
                if (!h.readable() || stateMatches && oldEnough) {
                    each.accept(summary);
                    counts[1]++;
                    if (query.limit() > 0 && counts[1] >= query.limit()) {
                        break;
                    }
                }
            }
            int total = entries.values().stream().mapToInt(List::size).sum();
            return new BacklogReport(true, total, counts[0], counts[1], counts[2], counts[3]);
        });
    }

    /** Whether a key belongs to the backlog by its records: armed, unknown, with an unused authorization, or unreadable. */
    private static boolean inBacklog(KeySummary s) {
        return s.state() == null || s.state() == ScopeState.ARMED || s.state() == ScopeState.SEND_STATUS_UNKNOWN
                || s.unusedAuthorizations() > 0;
    }

    /**
     * The entries of {@code kinds} as the index lists them now, by key in key order: {@code getChildren} of
     * each kind's 16 buckets (names that are no entry are left out).
     */
    private java.util.SortedMap<String, List<String>> readIndex(List<BacklogIndex.Kind> kinds, boolean forTheWalk)
            throws Exception {
        java.util.SortedMap<String, List<String>> byKey = new java.util.TreeMap<>();
        for (BacklogIndex.Kind kind : kinds) {
            for (String bucket : BacklogIndex.buckets(ns.namespace, kind)) {
                List<String> names;
                try {
                    names = ns.zk.getChildren(bucket, null);
                } catch (KeeperException.NoNodeException gone) {
                    continue; // an admin removed it: its entries are the walk's to find
                } catch (KeeperException e) {
                    if (!forTheWalk) {
                        throw e;
                    }
                    // The walk's counts never depend on the index: a bucket it cannot list (flooded past the reply
                    // limit with the worker credential, say) is compared as empty, and its entries count as missing.
                    LOG.warn("oncegate namespace {}: backlog index bucket {} cannot be listed ({}); the walk goes on without it",
                            ns.namespace, bucket, e.code());
                    continue;
                }
                for (String name : names) {
                    BacklogIndex.Entry e = BacklogIndex.parse(ns.namespace, kind, bucket, name);
                    if (e != null) {
                        byKey.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e.path());
                    }
                }
            }
        }
        return byKey;
    }

    /**
     * A reader met an unreadable record of {@code key}: its {@code unreadable} entry, unless {@code known}
     * (the key's entries as read; null: unknown, ask) holds it. Best effort: a role that may not create it,
     * or an index that is not there, leaves it to the walk.
     */
    private void noteUnreadable(String key, List<String> known) throws Exception {
        String entry = BacklogIndex.entry(ns.namespace, BacklogIndex.Kind.UNREADABLE, key, -1);
        if (known != null && known.contains(entry)) {
            return;
        }
        try {
            if (known == null && ns.zk.exists(entry, null) != null) {
                return;
            }
            ns.zk.create(entry, new byte[0], org.apache.zookeeper.CreateMode.PERSISTENT, ns.acls().forKind(Layout.Kind.INDEX_ENTRY),
                    null, false);
        } catch (KeeperException.NodeExistsException | KeeperException.NoNodeException | KeeperException.NoAuthException e) {
            LOG.debug("oncegate namespace {}: unreadable key {} not entered in the backlog index: {}", ns.namespace, key, e.code());
        }
    }

    /** The entries the records of {@code h} call for (an unreadable key's aside: readers enter those). */
    private List<String> expectedEntries(KeyHistory h) {
        List<String> out = new ArrayList<>();
        if (!h.exists() || !h.readable()) {
            return out;
        }
        int latest = h.scopes().size() - 1;
        if (h.state() == ScopeState.ARMED) {
            out.add(BacklogIndex.entry(ns.namespace, BacklogIndex.Kind.ARMED, h.key(), latest));
        } else if (h.state() == ScopeState.SEND_STATUS_UNKNOWN) {
            out.add(BacklogIndex.entry(ns.namespace, BacklogIndex.Kind.UNKNOWN, h.key(), latest));
        }
        for (KeyHistory.Authorization a : h.authorizations()) {
            if (a.status() == KeyHistory.AuthorizationStatus.UNUSED) {
                out.add(BacklogIndex.entry(ns.namespace, BacklogIndex.Kind.AUTHORIZED, h.key(), a.after()));
            }
        }
        return out;
    }

    @Override
    public IndexCheck checkIndex(boolean repair, Consumer<KeySummary> each) throws InterruptedException {
        Objects.requireNonNull(each, "each");
        return runInNamespace("walk every key", () -> {
            boolean indexed = ns.protocol.operator().indexExists();
            // The index before the walk: an entry made later belongs to a change the walk may not have seen.
            java.util.SortedMap<String, List<String>> index = indexed ? readIndex(List.of(BacklogIndex.Kind.values()), true)
                    : new java.util.TreeMap<>();
            int[] counts = new int[3]; // scanned, listed, unreadable
            IndexRepair fix = new IndexRepair(repair);
            walk(key -> {
                KeyHistory h = readInWalk(key);
                counts[0]++;
                counts[1]++;
                if (!h.readable()) {
                    counts[2]++;
                }
                each.accept(summary(h));
                List<String> had = index.remove(key);
                if (indexed) {
                    if (!h.readable()) {
                        noteUnreadable(key, had == null ? List.of() : had);
                    }
                    fix.compare(key, h, had == null ? List.of() : had);
                }
                return true;
            });
            for (java.util.Map.Entry<String, List<String>> left : index.entrySet()) {
                // Entries of keys the walk did not meet: removed (gc, an admin's deleteall) since the index was read.
                if (ns.zk.exists(Layout.keyPath(ns.namespace, left.getKey()), null) == null) {
                    fix.stale(left.getValue());
                }
            }
            return new IndexCheck(new ListReport(counts[0], counts[1], counts[2]), indexed, fix.missing, fix.stale,
                    fix.repaired, fix.refused);
        });
    }

    /** What a walk found the index to lack or hold in excess, and repairs when asked and allowed. Walking thread only. */
    private final class IndexRepair {
        private final boolean repair;
        int missing;
        int stale;
        int repaired;
        String refused;

        IndexRepair(boolean repair) {
            this.repair = repair;
        }

        /** Holds {@code key}'s entries as the index listed them before the walk against its records as read now. */
        void compare(String key, KeyHistory h, List<String> had) throws Exception {
            List<String> expected = expectedEntries(h);
            List<String> lacking = new ArrayList<>(expected);
            lacking.removeAll(had);
            List<String> excess = new ArrayList<>(had);
            excess.removeAll(expected); // an unreadable entry of a key that reads again is excess too
            if (!h.readable()) {
                excess.clear(); // the records cannot say which entries are due: leave them
            }
            if (!lacking.isEmpty() || !excess.isEmpty()) {
                // A writer may have moved the key since the index was read: judge against both read again.
                KeyHistory now = readInWalk(key);
                List<String> due = expectedEntries(now);
                List<String> present = BacklogIndex.present(ns.zk, union(lacking, excess, due));
                lacking = new ArrayList<>(due);
                lacking.removeAll(present);
                excess.retainAll(present);
                excess.removeAll(due);
                if (!now.readable()) {
                    excess.clear();
                }
            }
            for (String entry : lacking) {
                missing++;
                change(entry, true);
            }
            stale(excess);
        }

        void stale(List<String> entries) throws Exception {
            for (String entry : entries) {
                stale++;
                change(entry, false);
            }
        }

        private void change(String entry, boolean create) throws Exception {
            if (!repair || refused != null) {
                return;
            }
            try {
                if (create) {
                    ns.zk.create(entry, new byte[0], org.apache.zookeeper.CreateMode.PERSISTENT,
                            ns.acls().forKind(Layout.Kind.INDEX_ENTRY), null, false);
                } else {
                    ns.zk.delete(entry, -1);
                }
                repaired++;
            } catch (KeeperException.NodeExistsException | KeeperException.NoNodeException done) {
                // someone else did it meanwhile (or its bucket is gone)
            } catch (KeeperException.NoAuthException e) {
                refused = "this identity may not " + (create ? "create" : "remove") + " backlog index entries (" + entry
                        + "): run the walk as the operator or admin to repair them";
            }
        }
    }

    private static List<String> union(List<String> a, List<String> b, List<String> c) {
        TreeSet<String> all = new TreeSet<>(a);
        all.addAll(b);
        all.addAll(c);
        return new ArrayList<>(all);
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

    /** When a scope entered its state, by the server's clock ({@link KeyHistory.Scope#recordedAt}). */
    private static Instant since(KeyHistory.Scope s) {
        return s == null ? null : s.recordedAt();
    }

    /**
     * {@link #read}, for a walk: a key this identity may not read (the worker credential can create
     * one with an ACL of its own alone) is one unreadable key, reported as such, not the end of the walk.
     */
    private KeyHistory readInWalk(String key) throws Exception {
        try {
            return read(key);
        } catch (KeeperException.NoAuthException e) {
            String keyPath = Layout.keyPath(ns.namespace, key);
            String at = e.getPath() == null ? keyPath : e.getPath();
            return new KeyHistory(key, keyPath, true, null, List.of(), List.of(),
                    List.of(new KeyHistory.Unreadable(at, new byte[0], locked(at), REPAIR_LOCKED)),
                    "A new attempt would stop: this identity may not read the key's records.", null, null,
                    ns.genesisId(), 0);
        }
    }

    private static String locked(String path) {
        return "this identity may not read " + path + " (it was created with an ACL of its own, which a stolen worker"
                + " credential can do)";
    }

    static final String REPAIR_LOCKED = "have the ZooKeeper super user (the server's"
            + " zookeeper.DigestAuthenticationProvider.superDigest) look at it (zkCli `addauth digest super:…`, `getAcl`,"
            + " `get`) and delete it if no honest worker wrote it";

    /**
     * Visits every key, bucket by bucket in order, until {@code visit} says stop. A bucket this
     * identity may not list (see {@link #readInWalk}) does not end the walk: it fails the call once
     * every other bucket was walked, naming it.
     */
    private void walk(KeyVisitor visit) throws Exception {
        List<String> locked = new ArrayList<>();
        walkBuckets(visit, locked);
        if (!locked.isEmpty()) {
            throw new OncegateException("could not walk " + locked.size() + " bucket(s) of keys that this identity may not"
                    + " list: " + String.join(", ", locked.subList(0, Math.min(5, locked.size())))
                    + (locked.size() > 5 ? ", …" : "") + " (created with an ACL of their own, which a stolen worker"
                    + " credential can do); every other key was walked. To repair: " + REPAIR_LOCKED);
        }
    }

    private void walkBuckets(KeyVisitor visit, List<String> locked) throws Exception {
        String keys = Layout.keys(ns.namespace);
        for (String b1 : sortedChildren(keys, locked)) {
            for (String b2 : sortedChildren(keys + "/" + b1, locked)) {
                for (String key : sortedChildren(keys + "/" + b1 + "/" + b2, locked)) {
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

    /** {@code path}'s children in order; none when it is gone, or when this identity may not list it (added to {@code locked}). */
    private List<String> sortedChildren(String path, List<String> locked) throws Exception {
        try {
            List<String> names = new ArrayList<>(ns.zk.getChildren(path, null));
            names.sort(null);
            return names;
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException.NoAuthException e) {
            locked.add(path);
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
    public Authorized authorize(String key, int after, String by, String reason) throws InterruptedException {
        EffectKey.requireKeyText(key);
        if (after < 0) {
            throw new IllegalArgumentException("after: a scope number (0 or more), got " + after);
        }
        requireText("by", by, "must name who authorizes the redelivery");
        requireText("reason", reason, "must say why a new delivery is justified");
        return runInNamespace("authorize a redelivery of key " + key, () -> {
            KeyHistory before = read(key);
            requireLatest(before, after);
            int n = consumedLatest(before, "authorize");
            Records.Authorization record = new Records.Authorization(by, reason, ns.clock.instant(), actor());
            String keyPath = Layout.keyPath(ns.namespace, key);
            OperatorWrites.Authorizing done = ns.protocol.operator().authorize(keyPath, n, record);
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

    /**
     * Refuses an authorization after scope {@code after} unless that is the key's latest scope (when
     * the key exists and reads; {@link #consumedLatest} says why otherwise). An earlier scope is how a
     * repeated authorize looks once a worker used the first one: the scope it opened is latest now.
     * Nothing is written either way, so a repeat authorizes nothing more.
     */
    private void requireLatest(KeyHistory h, int after) {
        if (!h.exists() || h.state() == null) {
            return;
        }
        int latest = h.scopes().get(h.scopes().size() - 1).scope();
        if (after > latest) {
            throw new IllegalArgumentException("key " + h.key() + " has no scope " + after + ": its latest scope is "
                    + latest + " (" + h.state().wireName() + "); nothing was written. `oncegate inspect --key " + h.key()
                    + "` shows the scope a redelivery follows (authorize_command)");
        }
        if (after < latest) {
            StringBuilder since = new StringBuilder();
            for (KeyHistory.Scope s : h.scopes()) {
                if (s.scope() > after) {
                    since.append(since.length() == 0 ? "" : ", then ").append("scope ").append(s.scope()).append(" (opened by ")
                            .append(s.opened()).append(") is ").append(s.state() == null ? "unreadable" : s.state().wireName());
                }
            }
            throw new IllegalArgumentException("scope " + after + " of key " + h.key() + " is not its latest scope: "
                    + since + ". A redelivery after scope " + after + " happened or is under way since the decision this"
                    + " authorization was for, so nothing was written. To deliver once more, check the destination, then"
                    + " authorize after the latest scope once it is consumed (`oncegate inspect --key " + h.key() + "`)");
        }
    }

    /** The latest scope's number, when the key exists, reads, and is consumed; else IllegalArgumentException. */
    private int consumedLatest(KeyHistory h, String verb) {
        if (!h.exists()) {
            throw new IllegalArgumentException("key " + h.key() + " does not exist in " + ns.namespace
                    + ": nothing was ever attempted for it, so there is nothing to " + verb);
        }
        ScopeState state = h.state();
        // The latest scope's own number: with a scope missing below it, the count of scopes read is not it.
        int n = h.scopes().isEmpty() ? -1 : h.scopes().get(h.scopes().size() - 1).scope();
        if (state == null || !h.readable()) { // fail closed: an operator's write on a story it cannot read in full
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

    private static IllegalArgumentException nextScopeOpened(String key, int read, int opened) {
        return new IllegalArgumentException("key " + key + ": scope " + opened + " was opened while scope " + read
                + " was being reconciled (an authorization was used): nothing was reconciled; see what scope " + opened
                + " did (oncegate inspect) before reconciling again");
    }

    @Override
    public Reconciled reconcile(String key, String by, String evidence) throws InterruptedException {
        EffectKey.requireKeyText(key);
        requireText("by", by, "must name who checked the destination");
        requireText("evidence", evidence, "must say what the destination showed");
        return runInNamespace("reconcile key " + key, () -> {
            String keyPath = Layout.keyPath(ns.namespace, key);
            // One attempt id for every round: a round whose multi was applied but whose reply was lost (Curator's
            // retry then meets NodeExists) finds its own record in the next round, and says it created it.
            Actor me = actor();
            int first = -1; // the scope the first round found latest: the one the person checked for
            for (int round = 0; round < RECONCILE_RETRIES; round++) {
                KeyHistory h = read(key);
                int n = consumedLatest(h, "reconcile");
                KeyHistory.Scope latest = h.scopes().get(n);
                if (latest.reconciliation() != null) {
                    KeyHistory.Reconciliation found = latest.reconciliation();
                    boolean ours = found.actor() != null && me.attempt().equals(found.actor().attempt());
                    return new Reconciled(Layout.reconciliation(keyPath, n), n, ours, found);
                }
                if (latest.state() == ScopeState.SENT_VERIFIED) {
                    throw new IllegalArgumentException("key " + key + " scope " + n + " is sent_verified already: nothing"
                            + " to reconcile");
                }
                if (first < 0) {
                    first = n;
                } else if (n != first) {
                    throw nextScopeOpened(key, first, n);
                }
                ScopeView view = ns.protocol.reads().readScope(keyPath, n);
                if (view.scope() != n || view.state() != ScopeState.ARMED && view.state() != ScopeState.SEND_STATUS_UNKNOWN) {
                    continue; // it changed since: read again
                }
                // The version just read is what the reconciliation's multi checks, and an authorization opening scope
                // n+1 moves it: read after such an opening, it would pass. Scope n+1 exists from that opening on.
                if (ns.zk.exists(Layout.scope(keyPath, n + 1), null) != null) {
                    throw nextScopeOpened(key, n, n + 1);
                }
                KeyHistory.Reconciliation reconciliation = new KeyHistory.Reconciliation(Outcome.SENT_VERIFIED, by, evidence,
                        me, ns.clock.instant());
                if (ns.protocol.operator().reconcile(view, reconciliation)) {
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
            // Ages are the server's: now is the creation time of a probe znode, a record's age is its znode's.
            OperatorWrites.Probe probe = ns.protocol.operator().probe();
            ns.protocol.operator().deleteProbe(probe.path());
            Instant serverNow = Instant.ofEpochMilli(probe.stat().getCtime());
            Instant cutoff = serverNow.minus(olderThan);
            int[] counts = new int[3];
            walk(key -> {
                counts[0]++;
                KeyHistory h = readInWalk(key);
                KeyHistory.Scope latest = h.scopes().isEmpty() ? null : h.scopes().get(h.scopes().size() - 1);
                ScopeState state = h.state();
                Instant since = since(latest);
                boolean old = since != null && since.isBefore(cutoff);
                boolean terminal = state == ScopeState.SENT_VERIFIED || state == ScopeState.SEND_STATUS_UNKNOWN;
                if (!h.readable() || !terminal || !old) {
                    if (!h.readable() && old) {
                        counts[2]++;
                        each.accept(new GcEntry(key, h.path(), state, since, false, "unreadable: " + h.unreadable().get(0).problem()));
                    }
                    return true;
                }
                String skew = clockSkew(latest);
                if (skew != null) {
                    counts[2]++;
                    LOG.warn("oncegate namespace {}: kept key {} past retention: {}", ns.namespace, key, skew);
                    each.accept(new GcEntry(key, h.path(), state, since, false, skew));
                    return true;
                }
                if (dryRun) {
                    counts[1]++;
                    each.accept(new GcEntry(key, h.path(), state, since, false, null));
                    return true;
                }
                List<String> paths;
                try {
                    paths = subtree(h.path());
                } catch (KeeperException.NoAuthException e) {
                    counts[2]++; // a znode under it that this identity may not list, which only the super user may remove
                    each.accept(new GcEntry(key, h.path(), state, since, false,
                            locked(e.getPath() == null ? h.path() : e.getPath())));
                    return true;
                }
                if (paths != null && scopeAbove(h.path(), latest.scope(), paths)) {
                    // Opened after this read listed the key's scopes, and before it read the latest one's version
                    // (the opening moved it): that version's check would pass, and remove a fresh delivery.
                    counts[2]++;
                    each.accept(new GcEntry(key, h.path(), state, since, false, "a newer scope opened while it was being read"));
                    return true;
                }
                if (paths == null || !ns.protocol.operator().deleteKey(latest.path(), latest.version(), paths)) {
                    counts[2]++;
                    each.accept(new GcEntry(key, h.path(), state, since, false, paths == null
                            ? "someone is in an election under it" : "it changed while being removed"));
                    return true;
                }
                counts[1]++;
                LOG.info("oncegate namespace {}: removed key {} ({} since {} by the server's clock): it is open again",
                        ns.namespace, key, state.wireName(), since);
                each.accept(new GcEntry(key, h.path(), state, since, true, null));
                return true;
            });
            return new GcReport(counts[0], counts[1], counts[2], dryRun);
        });
    }

    /**
     * Why the time a writer put into the record that decided {@code scope} (its outcome's or
     * reconciliation's {@code at}) disagrees with the server's time of that record by more than
     * {@link #RECORD_CLOCK_BOUND}, or null when it agrees. Retention dates a key by the server, but
     * a writer whose clock was that far off is a reason for a person to look before the key is
     * removed: it is kept and reported.
     */
    private static String clockSkew(KeyHistory.Scope scope) {
        Instant own = scope.reconciliation() != null ? scope.reconciliation().at()
                : scope.outcome() != null ? scope.outcome().at() : null;
        if (own == null) {
            return null;
        }
        Duration off = Duration.between(scope.recordedAt(), own).abs();
        return off.compareTo(RECORD_CLOCK_BOUND) <= 0 ? null : "the record's own time " + own + " disagrees with the"
                + " server's " + scope.recordedAt() + " by " + off + " (its writer's clock is off): kept; check the"
                + " key, then remove it by hand if it is to go";
    }

    /** Whether {@code paths} (a key's subtree) holds a scope numbered above {@code n}. */
    private static boolean scopeAbove(String keyPath, int n, List<String> paths) {
        String prefix = keyPath + "/";
        for (String p : paths) {
            if (p.startsWith(prefix) && p.indexOf('/', prefix.length()) < 0 && Layout.scopeNumber(p.substring(prefix.length())) > n) {
                return true;
            }
        }
        return false;
    }

    /** Every znode of the key, children first, the key last; null when an election node is live under it. */
    private List<String> subtree(String keyPath) throws Exception {
        List<String> out = new ArrayList<>();
        return collect(keyPath, out) ? out : null;
    }

    /** Adds {@code path}'s subtree to {@code out}, children first; false when a latch container holds election nodes. */
    private boolean collect(String path, List<String> out) throws Exception {
        List<String> children = ns.zk.getChildren(path, null);
        if (path.endsWith("/" + Layout.LATCH) && !children.isEmpty()) {
            return false; // an election under way
        }
        for (String child : children) {
            if (!collect(path + "/" + child, out)) {
                return false;
            }
        }
        out.add(path);
        return true;
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
            List<ACL> genesisAcl = ns.zk.getAcl(genesisPath, null); // set last by `acl`: whether the last one finished
            NamedRoles naming = nameRoles(genesisPath, roles);
            int epoch = naming.epoch();
            Function<List<ACL>, String> refused = refusedUntilNow(genesisAcl, naming.before());
            long[] changed = {0};
            long[] stale = {0}; // persistent znodes changed in this pass
            List<String> examples = new ArrayList<>();
            // Znodes this identity may not read or change (a stolen worker credential can create such a one): the walk
            // goes on past them, so that one of them cannot keep the old identities on every other znode.
            Set<String> locked = new TreeSet<>();
            Set<String> held = new TreeSet<>();
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
                AclWalk.walk(ns.curator(), ns.namespace, acls, genesisPath::equals, true, refused, new AclWalk.Visitor() {
                    @Override
                    public void differs(String path, List<ACL> actual, Stat stat, List<ACL> expected) {
                        changed[0]++;
                        each.accept(path);
                        if (stat.getEphemeralOwner() == 0 && stale[0]++ < 3) {
                            examples.add(path);
                        }
                    }

                    @Override
                    public void unreadable(String path) {
                        locked.add(path);
                    }

                    @Override
                    public void held(String path, String weakness) {
                        held.add(path);
                    }
                });
            } while (stale[0] > 0);
            if (ns.protocol.operator().giveGenesisItsAcl(acls)) {
                changed[0]++;
                each.accept(genesisPath);
            }
            if (!locked.isEmpty()) {
                List<String> named = locked.stream().limit(5).toList();
                throw new OncegateException("could not apply the role ACLs to " + locked.size() + " znode(s) this identity"
                        + " may not read or change: " + String.join(", ", named) + (locked.size() > named.size() ? ", …" : "")
                        + " (created with an ACL of their own: a stolen worker credential can do that); every other znode"
                        + " has its role ACL now. Have the ZooKeeper super user (the server's"
                        + " zookeeper.DigestAuthenticationProvider.superDigest) look at them and delete them, then run"
                        + " `oncegate acl` again and check with `oncegate doctor`"
                        + (held.isEmpty() ? "" : ". Also: " + AclWalk.heldMessage(held)));
            }
            if (!held.isEmpty()) {
                throw new OncegateException("could not apply the role ACLs to every znode (every other one has its role"
                        + " ACL now): " + AclWalk.heldMessage(held));
            }
            LOG.info("oncegate namespace {}: roles epoch {} (worker {}, operator {}, admin {}): {} znodes given their role"
                            + " ACL in {} passes", ns.namespace, epoch, user(roles.worker()), user(roles.operator()),
                    user(roles.admin()), changed[0], pass);
            return changed[0];
        });
    }

    /**
     * Which {@code KEY/authorizations} znodes readers refused until this {@code acl} call, and so must
     * go on refusing ({@link AclWalk#walk}; null: none). They judged by the roles the genesis named,
     * {@code before}; the genesis' own ACL, which {@code acl} sets last, says whether the call that
     * named them finished:
     * <ul>
     *   <li>no roles before: none (turning roles on trusts the authorizations there, as their readers did);</li>
     *   <li>it finished: every one whose ACL lets someone other than an operator create there;</li>
     *   <li>it stopped before its end while turning roles on (the genesis still world-writable): none, as
     *       if they were turned on now;</li>
     *   <li>it stopped before its end during a rotation: only those that the world, an address, a
     *       scheme other than digest or the worker may create under. One that lets other digest
     *       identities in may carry the previous roles' ACL, which that call did not reach (the README's
     *       threat model says what this leaves to a forger who invents identities).</li>
     * </ul>
     */
    private static Function<List<ACL>, String> refusedUntilNow(List<ACL> genesisAcl, Genesis.Roles before) {
        if (before == null) {
            return null;
        }
        Acls readers = Acls.of(before);
        if (Acls.same(genesisAcl, readers.forKind(Layout.Kind.GENESIS))) {
            return readers::authorizationsWeakness;
        }
        return Acls.worldWritable(genesisAcl) ? null : readers::authorizationsWeaknessBeyondDigests;
    }

    /** The roles epoch {@link #nameRoles} made, and the roles the genesis named before (null: none). */
    private record NamedRoles(int epoch, Genesis.Roles before) {
    }

    /**
     * {@code setData NS/genesis} naming {@code roles}, at the version just read and only in the
     * namespace life this operator works in.
     *
     * @return the genesis' new version (the new roles epoch), and the roles it named before
     */
    private NamedRoles nameRoles(String genesisPath, Genesis.Roles roles) throws Exception {
        Stat stat = new Stat();
        Genesis genesis = Records.decodeGenesis(genesisPath, ns.zk.getData(genesisPath, stat, null));
        Decision.StopUnavailable replaced = ns.checkGenesis(java.util.Optional.of(genesis));
        if (replaced != null) {
            throw new StopException(replaced);
        }
        try {
            return new NamedRoles(ns.protocol.operator().nameRoles(genesis, stat.getVersion(), roles), genesis.roles());
        } catch (KeeperException.BadVersionException e) {
            // The write may be ours, applied before its reply was lost (the client's retry met its own version):
            // then the genesis is exactly what this call wrote, one version on.
            Stat now = new Stat();
            Genesis after = Records.decodeGenesis(genesisPath, ns.zk.getData(genesisPath, now, null));
            if (now.getVersion() == stat.getVersion() + 1 && after.id().equals(genesis.id()) && roles.equals(after.roles())) {
                return new NamedRoles(now.getVersion(), genesis.roles());
            }
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
        long session = ns.zk.sessionId();
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
            throw new OncegateException("could not " + what + ": permission denied" + (e.getPath() != null ? " at " + e.getPath() : "")
                    + " (this identity's role may not do that: check --auth / the client's credentials)", e);
        } catch (Exception e) {
            throw new OncegateException("could not " + what + ": " + e
                    + " (check that ZooKeeper is reachable and this identity may read the namespace)", e);
        }
    }
}
