package dev.oncegate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * SPEC §4, held against the simulated world after every step: the ledger of crossings (what the
 * actions saw, which no record can fake) against the records (what every reader decides from, read by
 * the real decoder with the admin's credential).
 * <ul>
 *   <li>at most one crossing per scope (of one incarnation of a key);</li>
 *   <li>possibly delivered crossings of a key ≤ 1 + the operator's authorizations + its gc removals;</li>
 *   <li>a scope reads not_sent only when its crossing's action proved nothing was sent (a possibly
 *       delivered scope never reads not_sent; a scope nobody crossed never does);</li>
 *   <li>a scope once read consumed stays consumed while its key lives;</li>
 *   <li>a lease write lands only while its writer's election node exists (the lease is bound to the
 *       writer's place in the election);</li>
 *   <li>without a rogue, no scope ever reads unreadable: the protocol's own writes, under any faults,
 *       never contradict each other (only a forgery may make readers stop on a record);</li>
 *   <li>gc removes only keys whose last crossing is older than the retention by the server's clock;</li>
 *   <li>no executor write lands in a recreated znode: an outcome is recorded in the incarnation of the
 *       key its executor crossed in;</li>
 *   <li>lost data never looks like a fresh start (§4.7): a scope is armed only while the namespace carries
 *       the genesis its executor's gate works in, so no gate crosses in a namespace being wiped or
 *       initialised again since (a wiped key counts as removed, like gc's: the new life may deliver it);</li>
 *   <li>liveness: no contender waits past its deadline (plus the rules' own bound); once the faults
 *       stop, every key is decided for a new contender.</li>
 * </ul>
 *
 * <p>Not thread-safe: called by whoever holds the simulation's baton.
 */
final class SimChecker {

    /** Ends a history at its first violation. */
    static final class Violation extends RuntimeException {
        Violation(String message) {
            super(message, null, false, false);
        }
    }

    /** One crossing: an action invoked. {@code result} is null while it runs, and stays null when its actor crashed. */
    static final class Crossed {
        final String actor;
        final String key;
        final long keyZxid;
        final int scope;
        final long at;
        String result;

        Crossed(String actor, String key, long keyZxid, int scope, long at) {
            this.actor = actor;
            this.key = key;
            this.keyZxid = keyZxid;
            this.scope = scope;
            this.at = at;
        }

        boolean possiblyDelivered() {
            return !"not_sent".equals(result);
        }

        @Override
        public String toString() {
            return actor + " crossed scope " + scope + " of key " + key.substring(0, 8) + "@" + keyZxid
                    + " (" + (result == null ? "in flight or crashed" : result) + ")";
        }
    }

    /**
     * Whether a crossing's context must name the key's creation zxid ({@code BoundaryAction.Context#keyZxid},
     * from which the idempotency key is derived). On by default; {@code -Doncegate.sim.contextIncarnation=false}
     * turns it off (to look past a known failure of this rule while hunting another).
     */
    static final boolean CHECK_CONTEXT_INCARNATION = Boolean.parseBoolean(
            System.getProperty("oncegate.sim.contextIncarnation", "true"));

    private final SimWorld world;
    private final List<String> violations = new ArrayList<>();
    private final List<Crossed> crossings = new ArrayList<>();
    /** Actors whose arming write's wait was interrupted: the library records not_sent without invoking the action. */
    private final java.util.Set<String> armingInterrupted = new java.util.HashSet<>();
    private final Map<String, Integer> authorizations = new HashMap<>();
    private final Map<String, Integer> removals = new HashMap<>();
    /** "key@incarnation/scope" → the state it was first read consumed in. */
    private final Map<String, ScopeState> consumed = new HashMap<>();
    private final List<long[]> jumps = new ArrayList<>();
    private DefaultOperator eye;
    private final Map<String, Long> fingerprints = new HashMap<>();
    /** Each key's incarnation (czxid) last seen. */
    private final Map<String, Long> incarnations = new HashMap<>();
    /** Authorization znodes ever seen (an operator's: only operators may create them), per key. */
    private final Map<String, java.util.Set<String>> authorizationsSeen = new HashMap<>();
    /** Each genesis id marker ever seen: {the zxid that created it, the zxid of the write that deleted it or 0}. */
    private final Map<String, long[]> lives = new HashMap<>();
    /** The server's zxid when the wipe began (0: no wipe). */
    private long wipedAt;
    /** "key@czxid" of every key incarnation the wipe deleted something of. */
    private final java.util.Set<String> wipedIncarnations = new java.util.HashSet<>();

    SimChecker(SimWorld world) {
        this.world = world;
    }

    List<String> violations() {
        return violations;
    }

    List<Crossed> crossings() {
        return crossings;
    }

    void violation(String message) {
        violationQuietly(message);
        throw new Violation(message);
    }

    void violationQuietly(String message) {
        String line = "step " + world.step() + ": " + message;
        violations.add(line);
        world.trace("VIOLATION " + message);
    }

    // ---- the ledger ---------------------------------------------------------------------------------

    /** An action was invoked: the boundary is being crossed now. */
    /** {@code actor}'s arming write is about to have its wait interrupted (a world with interrupts). */
    void armingInterrupted(SimScheduler.Actor actor) {
        armingInterrupted.add(actor.name);
    }

    Crossed crossing(SimScheduler.Actor actor, BoundaryAction.Context context) {
        String key = context.key().key();
        // The ledger names the incarnation the server holds (the key as it is while the action runs), so
        // that the rules below hold whatever the context says; the context's own is checked apart.
        org.apache.zookeeper.data.Stat keyStat = world.server.stat(Layout.keyPath(SimWorld.NS, key));
        long incarnation = keyStat == null ? context.keyZxid() : keyStat.getCzxid();
        Crossed c = new Crossed(actor.name, key, incarnation, context.scope(), world.sched.now());
        world.trace(c.toString());
        if (CHECK_CONTEXT_INCARNATION && context.keyZxid() != incarnation) {
            crossings.add(c);
            violation("the action's context names key incarnation " + context.keyZxid() + " but " + c
                    + " runs in the key created at zxid " + incarnation + " (the idempotency key is derived from it)");
        }
        for (Crossed other : crossings) {
            if (other.key.equals(key) && other.keyZxid == c.keyZxid && other.scope == c.scope) {
                crossings.add(c);
                violation("two crossings of one scope: " + other + ", then " + c);
            }
        }
        inItsLife(c, context);
        crossings.add(c);
        long delivered = crossings.stream().filter(x -> x.key.equals(key) && x.possiblyDelivered()).count();
        int allowed = 1 + authorizations.getOrDefault(key, 0) + removals.getOrDefault(key, 0);
        if (delivered > allowed) {
            violation("key " + key.substring(0, 8) + " possibly delivered " + delivered + " times with " + allowed
                    + " allowed (1 + " + authorizations.getOrDefault(key, 0) + " authorizations + "
                    + removals.getOrDefault(key, 0) + " gc removals): " + crossings);
        }
        world.count("invariant: crossing checked");
        return c;
    }

    /**
     * SPEC §4.7: the scope was armed (its armed record created) while the namespace carried the genesis the
     * executor's gate works in, by the lifetimes of the genesis markers seen after every write.
     */
    private void inItsLife(Crossed c, BoundaryAction.Context context) {
        String scopePath = Layout.scope(Layout.keyPath(SimWorld.NS, c.key), c.scope);
        org.apache.zookeeper.data.Stat armed = world.server.stat(Layout.armed(scopePath));
        if (armed == null) {
            world.count("invariant: genesis at arming (armed record already wiped)");
            return;
        }
        long[] life = lives.get(context.genesisId());
        long at = armed.getCzxid();
        if (life == null || at < life[0] || (life[1] != 0 && at > life[1])) {
            crossings.add(c);
            violation(c + " was armed at zxid " + at + " by a gate of genesis " + context.genesisId()
                    + ", which the namespace " + (life == null ? "never carried" : "carried only at zxids " + life[0] + " to "
                    + (life[1] == 0 ? "now" : life[1])) + ": lost data looked like a fresh start");
        }
        world.count("invariant: genesis at arming checked");
    }

    /**
     * The wipe begins: from now on the backlog index and the unreadable-record rule no longer hold (the wipe
     * deletes buckets and leaves election containers behind), and each key incarnation it deletes part of
     * ({@link #wipeDeleted}) is judged by the ledger's rules only.
     */
    void wipeStarts() {
        if (wipedAt == 0) {
            wipedAt = world.server.zxid();
        }
    }

    /** The genesis markers now in the tree, against those seen: a new life begins, or one ends with this write. */
    private void followLives() {
        List<String> markers = world.server.children(Layout.genesis(SimWorld.NS));
        java.util.Set<String> now = markers == null ? java.util.Set.of() : new java.util.HashSet<>(markers);
        for (String id : now) {
            if (!lives.containsKey(id)) {
                lives.put(id, new long[] {world.server.stat(Layout.genesisMarker(SimWorld.NS, id)).getCzxid(), 0});
                eye = null; // the checker's own reader pins the genesis it first saw, as every reader does
            }
        }
        for (Map.Entry<String, long[]> life : lives.entrySet()) {
            if (life.getValue()[1] == 0 && !now.contains(life.getKey())) {
                life.getValue()[1] = world.server.zxid();
            }
        }
    }

    void crashed(SimScheduler.Actor actor) {
        // its crossing, if any, keeps result null: possibly delivered
    }

    /**
     * The operator asked to redeliver after scope {@code after} and got {@code a}: a redelivery after
     * another scope is one nobody decided (issue 15 item 3: authorize run twice wrote after-1).
     * Authorizations are counted from the records (afterWrite): an operator that crashed after the create
     * still authorized.
     */
    void authorized(EffectKey key, int after, Operator.Authorized a) {
        if (a.created() && a.after() != after) {
            violation("the operator authorized a redelivery after scope " + after + " of key " + key.key().substring(0, 8)
                    + " and " + a.path().replaceAll("[0-9a-f]{64}", "KEY") + " was written");
        }
    }

    void reconciled(EffectKey key, Operator.Reconciled r) {
        // a reconciliation says sent_verified: it never allows a delivery
    }

    void removed(Operator.GcEntry entry) {
        // seen in the records (afterWrite): an operator that crashed after the delete still removed
    }

    /** Key {@code key} (incarnation {@code czxid}) is gone: only gc may do that, and only to a key past its retention. */
    private void removedFromTree(String key, long czxid) {
        long now = world.sched.now();
        removals.merge(key, 1, Integer::sum);
        consumed.keySet().removeIf(k -> k.startsWith(key + "@"));
        if (wiped(key, czxid)) {
            world.count("records: a key lost in the wipe");
            return; // not gc's doing: the retention rule is gc's
        }
        world.count("invariant: gc removal checked");
        for (Crossed c : crossings) {
            if (c.key.equals(key) && c.keyZxid == czxid
                    && now - c.at < SimWorld.RETENTION.toMillis() - Duration.ofMinutes(10).toMillis()) {
                violation("key " + key.substring(0, 8) + " was removed although " + c + " was only "
                        + Duration.ofMillis(now - c.at) + " ago by the server's clock");
            }
        }
    }

    void jumped(long from, long to) {
        jumps.add(new long[] {from, to});
    }

    /** A contender's enter returned: it must not have waited past its deadline (and the rules' bound). */
    void entered(SimScheduler.Actor actor, EffectKey key, Duration wait, long started, Decision decision) {
        long now = world.sched.now();
        for (long[] j : jumps) {
            if (j[0] >= started && j[0] <= now) {
                return; // virtual time jumped while it waited
            }
        }
        long ttl = world.leaseTtlMs();
        long bound = Math.max(wait.toMillis(), 3 * ttl) + 2 * ttl + 10_000;
        if (now - started > bound) {
            violation("liveness: " + actor + " waited " + (now - started) + " ms for " + SimWorld.describe(decision)
                    + " with a wait of " + wait.toMillis() + " ms (bound " + bound + " ms)");
        }
    }

    /** A contender that came after the faults stopped must be decided. */
    void late(SimScheduler.Actor actor, EffectKey key, Decision decision) {
        if (decision instanceof Decision.StopBusy busy) {
            violation("liveness: key " + key.key().substring(0, 8) + " is not decided after the faults stopped: "
                    + actor + " got " + busy.reason());
        }
    }

    // ---- the records ---------------------------------------------------------------------------------

    void afterStep() {
        // The ledger's rules are checked as crossings happen; the records' after each write.
    }

    /**
     * An executor's outcome belongs to the incarnation of the key it crossed in: one recorded in a key
     * recreated since (gc, then a new contender) would be an executor write landing in a recreated znode.
     */
    private void landedInItsIncarnation(EffectKey key, long incarnation, KeyHistory.Scope scope) {
        String task = scope.outcome().by().task();
        boolean here = false;
        Crossed elsewhere = null;
        for (Crossed c : crossings) {
            if (c.key.equals(key.key()) && c.actor.equals(task) && c.scope == scope.scope()) {
                if (c.keyZxid == incarnation) {
                    here = true;
                } else {
                    elsewhere = c;
                }
            }
        }
        if (!here && elsewhere != null) {
            violation("the outcome of scope " + scope.scope() + " in key " + key.key().substring(0, 8) + "@" + incarnation
                    + " was written by " + elsewhere + ", of an incarnation since removed");
        }
        world.count("invariant: outcome's incarnation checked");
    }

    /** The highest zxid anywhere under the key's znode (0 when it is absent): changes with any write below it. */
    private long fingerprint(EffectKey key) {
        String keyPath = Layout.keyPath(SimWorld.NS, key.key());
        long print = 0;
        for (String path : world.server.paths(keyPath)) {
            org.apache.zookeeper.data.Stat stat = world.server.stat(path);
            if (stat != null) {
                print = Math.max(print, Math.max(stat.getMzxid(), Math.max(stat.getPzxid(), stat.getCzxid())));
            }
        }
        return print;
    }

    /** The wipe deleted {@code path}: the key incarnation it was part of (if any) is in the wipe's way from now on. */
    void wipeDeleted(String path) {
        String keys = Layout.keys(SimWorld.NS) + "/";
        if (!path.startsWith(keys)) {
            return;
        }
        String[] parts = path.substring(keys.length()).split("/");
        if (parts.length < 3) {
            return; // a bucket
        }
        String keyPath = keys + parts[0] + "/" + parts[1] + "/" + parts[2];
        org.apache.zookeeper.data.Stat key = world.server.stat(keyPath);
        Long czxid = key != null ? Long.valueOf(key.getCzxid()) : incarnations.get(parts[2]);
        if (czxid != null) {
            wipedIncarnations.add(parts[2] + "@" + czxid);
        }
    }

    /** Whether the wipe deleted part of the key incarnation created at {@code czxid}. */
    private boolean wiped(String key, long czxid) {
        return wipedIncarnations.contains(key + "@" + czxid);
    }

    /** Something was written: every key's records, read by the real decoder, against the ledger. */
    void afterWrite() {
        followLives();
        if (eye == null) {
            SimClient admin = world.client("eye", SimWorld.ADMIN, false);
            eye = new DefaultOperator(new NamespaceState(admin, SimWorld.NS, world.clock(0), ZxidMarks.inMemory(), false),
                    "eye");
        }
        for (EffectKey key : world.keys) {
            long print = fingerprint(key);
            if (Long.valueOf(print).equals(fingerprints.put(key.key(), print))) {
                continue; // nothing under the key changed since it was last checked
            }
            KeyHistory history;
            try {
                history = eye.inspect(key.key());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (StopException namespaceGone) {
                if (wipedAt == 0) {
                    throw namespaceGone;
                }
                world.count("records: the namespace wiped, not initialised again (not checked)");
                fingerprints.remove(key.key());
                continue;
            }
            Long incarnation = incarnations.get(key.key());
            if (incarnation != null && (!history.exists() || history.zxid() != incarnation)) {
                incarnations.remove(key.key());
                removedFromTree(key.key(), incarnation);
            }
            if (!history.exists()) {
                continue;
            }
            incarnations.put(key.key(), history.zxid());
            for (KeyHistory.Authorization a : history.authorizations()) {
                if (a.name().startsWith("after-") && authorizationsSeen.computeIfAbsent(key.key(), k -> new java.util.HashSet<>())
                        .add(history.zxid() + "/" + a.name())) {
                    authorizations.merge(key.key(), 1, Integer::sum);
                }
            }
            if (wiped(key.key(), history.zxid()) || (wipedAt != 0 && !history.readable())) {
                // Being deleted bottom-up (its scopes read unreadable once their armed records are gone), or left
                // behind by the wipe (election containers a latch re-created): the ledger's rules still hold
                // (two crossings of a scope, the delivery budget, inItsLife), the records' are off.
                world.count("records: a key in the wipe's way (not checked)");
                continue;
            }
            for (KeyHistory.Scope scope : history.scopes()) {
                Crossed crossed = null;
                for (Crossed c : crossings) {
                    if (c.key.equals(key.key()) && c.keyZxid == history.zxid() && c.scope == scope.scope()) {
                        crossed = c;
                    }
                }
                if (scope.outcome() != null && scope.outcome().by() != null) {
                    landedInItsIncarnation(key, history.zxid(), scope);
                }
                String id = key.key() + "@" + history.zxid() + "/" + scope.scope();
                if (scope.state() == null) {
                    world.count("records: an unreadable scope (readers stop)");
                    if (!world.config.rogue()) {
                        // Only a forgery (the rogue's) may make a scope unreadable: the protocol's own writes,
                        // under any faults, never contradict each other (a lost record, a rewritten outcome).
                        violation("scope " + scope.scope() + " of key " + key.key().substring(0, 8) + " reads unreadable"
                                + " in a world without a rogue: " + history.unreadable().stream()
                                .map(u -> u.path().replaceAll("[0-9a-f]{64}", "KEY") + ": " + u.problem()).toList());
                    }
                    continue; // unreadable: every reader stops on it (fail closed)
                }
                if (scope.state() == ScopeState.NOT_SENT && crossed == null && scope.armed() != null
                        && armingInterrupted.contains(scope.armed().by().task())) {
                    // Armed by an executor whose arming wait was interrupted: never invoked, so not_sent is the truth.
                    // It counts as this scope's crossing (one that delivered nothing) for the rules below and later.
                    crossed = new Crossed(scope.armed().by().task(), key.key(), history.zxid(), scope.scope(), world.sched.now());
                    crossed.result = "not_sent";
                    crossings.add(crossed);
                    world.count("invariant: armed, interrupted, never invoked: not_sent");
                }
                if (scope.state() == ScopeState.NOT_SENT) {
                    if (crossed == null) {
                        violation("scope " + scope.scope() + " of key " + key.key().substring(0, 8)
                                + " reads not_sent but nobody crossed it");
                    }
                    if (crossed.result == null ? true : !crossed.result.equals("not_sent")) {
                        violation("scope " + scope.scope() + " reads not_sent but " + crossed);
                    }
                }
                if ((scope.state() == ScopeState.OPEN || scope.state() == ScopeState.LEASED) && scope.lease() != null
                        && scope.mzxid() == world.server.zxid() && world.server.stat(scope.lease().electionNode()) == null) {
                    // The write just now put this lease: its writer's election node must exist (the lease CAS checks it).
                    violation("a lease write landed in scope " + scope.scope() + " of key " + key.key().substring(0, 8)
                            + " for " + scope.lease().holder().task() + " whose election node "
                            + scope.lease().electionNode().replaceAll("[0-9a-f]{64}", "KEY") + " does not exist");
                }
                ScopeState before = consumed.get(id);
                if (scope.state().consumed()) {
                    consumed.put(id, scope.state());
                }
                if (before != null && (scope.state() == ScopeState.OPEN || scope.state() == ScopeState.LEASED
                        || (before != ScopeState.ARMED && scope.state() == ScopeState.NOT_SENT))) {
                    violation("scope " + scope.scope() + " of key " + key.key().substring(0, 8) + " read "
                            + before + " and now reads " + scope.state());
                }
            }
            indexAgrees(key, history);
            world.count("invariant: records checked");
        }
    }

    /**
     * Without a rogue, the backlog index holds every entry the records call for, at once: the protocol's
     * own multis maintain it atomically with the records (an armed scope without outcome has its
     * {@code armed} entry, an unknown one its {@code unknown} entry, an unused authorization its
     * {@code authorized} entry), under any faults. (Stale entries may stay after rare races; every reader
     * confirms an entry by the records, so they show nothing.) Read from the server directly: the checker
     * never writes.
     */
    private void indexAgrees(EffectKey key, KeyHistory history) {
        if (world.config.rogue() || wipedAt != 0 || !history.readable() || history.scopes().isEmpty()) {
            // (a wipe deletes the index's buckets too: the protocol's multis then arm without the entry, by design)
            return;
        }
        int latest = history.scopes().size() - 1;
        List<String> due = new ArrayList<>();
        if (history.state() == ScopeState.ARMED) {
            due.add(BacklogIndex.entry(SimWorld.NS, BacklogIndex.Kind.ARMED, key.key(), latest));
        } else if (history.state() == ScopeState.SEND_STATUS_UNKNOWN) {
            due.add(BacklogIndex.entry(SimWorld.NS, BacklogIndex.Kind.UNKNOWN, key.key(), latest));
        }
        for (KeyHistory.Authorization a : history.authorizations()) {
            if (a.status() == KeyHistory.AuthorizationStatus.UNUSED) {
                due.add(BacklogIndex.entry(SimWorld.NS, BacklogIndex.Kind.AUTHORIZED, key.key(), a.after()));
            }
        }
        for (String entry : due) {
            if (world.server.stat(entry) == null) {
                violation("key " + key.key().substring(0, 8) + " reads " + history.state().wireName() + " in scope " + latest
                        + " but the backlog index lacks " + entry.replaceAll("[0-9a-f]{64}", "KEY")
                        + " in a world without a rogue (the index is kept in the protocol's own multis)");
            }
        }
        world.count("invariant: backlog index checked");
    }
}
