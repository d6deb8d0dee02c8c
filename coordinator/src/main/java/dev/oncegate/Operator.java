package dev.oncegate;

import static dev.oncegate.BuilderChecks.once;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;

/**
 * The operator's side of a namespace: read the whole story of a key, list keys by state,
 * authorize one redelivery, reconcile an unknown outcome after checking the destination, and
 * remove consumed keys past retention. Everything here reads records as typed values and reports
 * an unreadable record as part of the answer ({@link KeyHistory#unreadable()}), never as an
 * exception that hides the rest.
 *
 * <pre>{@code
 * Operator ops = Operator.builder(curator).namespace("/oncegate").build();
 * KeyHistory story = ops.inspect(key);
 * System.out.println(story.nextAttempt());   // what a new attempt would do now, and why
 * }</pre>
 *
 * <p>Under access control (the README's "Access control") each operation needs its role's credentials on the client:
 * inspect and list any role; authorize and reconcile the operator (or admin); gc the admin.
 *
 * <p>Thread-safe. The caller owns the client.
 */
public interface Operator {

    /** An operator over a started, caller-owned client. */
    static Builder builder(CuratorFramework client) {
        return new Builder(client);
    }

    /** The namespace this operator works in. */
    String namespace();

    /**
     * Everything recorded about a key (64 hex characters), in order, with unreadable records
     * reported and a plain-language line on what a new attempt would do now.
     *
     * @throws OncegateException when ZooKeeper cannot be read (unreachable, no permission) or the
     *                           namespace has no genesis (an unknown namespace is an error, not an empty answer)
     */
    KeyHistory inspect(String key) throws InterruptedException;

    /**
     * Walks every key bucket by bucket (each parent's child list stays small), in key order, and
     * hands {@code each} a summary of every key that matches; keeps going past unreadable keys,
     * which match every query (their state and age are unknown, so no filter may hide them) and
     * are reported with their problem and a null state.
     *
     * @throws OncegateException when ZooKeeper cannot be read or the namespace has no genesis
     */
    ListReport list(ListQuery query, Consumer<KeySummary> each) throws InterruptedException;

    /**
     * The backlog from the namespace's <em>backlog index</em>, at a cost that follows the backlog, not the
     * number of keys: keys armed without an outcome, keys {@code send_status_unknown}, keys with an unused
     * redelivery authorization, keys a reader found unreadable. The index only nominates keys: each is
     * read and decoded like {@link #inspect} reads it, and handed to {@code each} only when its own records
     * put it in the backlog and it matches {@code query}, in key order (unreadable keys match every query,
     * as in {@link #list}). An entry its records contradict (stale, or forged with the worker credential)
     * shows nothing; it is counted in {@link BacklogReport#stale()}.
     *
     * <p><b>A hint, not the authority.</b> Writers maintain the index inside the protocol's own multis,
     * but the worker credential can add or remove entries, and some records are made outside them (a
     * zkCli authorization, an older release's writes, a record damaged by hand): what the index lacks,
     * this misses. {@link #checkIndex} (the exporter's walk) finds and repairs that; {@link #list} walks
     * every key. No decision of a worker or an operator ever reads the index.
     *
     * @param query which backlog keys: {@code state} null (all of them), {@code ARMED} or
     *              {@code SEND_STATUS_UNKNOWN} (armed keys included)
     * @return what was read; {@link BacklogReport#indexed()} false, and nothing handed on, when the
     *         namespace has no index (initialised by an older release: {@code oncegate init} adds it)
     * @throws IllegalArgumentException when {@code query} asks for another state
     * @throws OncegateException        when ZooKeeper cannot be read or the namespace has no genesis
     */
    BacklogReport backlog(ListQuery query, Consumer<KeySummary> each) throws InterruptedException;

    /**
     * Walks every key as {@link #list} does (handing {@code each} the summary of every one), and holds
     * the backlog index against the records: entries the records call for that the index lacks
     * ({@link IndexCheck#missing()}: a hidden entry, a zkCli authorization, an older writer), and entries
     * they contradict ({@link IndexCheck#stale()}). With {@code repair}, creates and removes those entries
     * where this identity may (the operator's and admin's may; a read-only identity reports only); an
     * unreadable key's entry is made whatever {@code repair} says (readers enter those). The
     * authoritative count of the keyspace: its cost grows with the number of keys.
     *
     * @throws OncegateException when ZooKeeper cannot be read or the namespace has no genesis
     */
    IndexCheck checkIndex(boolean repair, Consumer<KeySummary> each) throws InterruptedException;

    /**
     * Writes an operator's authorization to redeliver the key once more after its consumed scope
     * {@code after}: the record {@code KEY/authorizations/after-<after>}, the same record as the zkCli
     * recipe {@code create KEY/authorizations/after-<n> '{"by":…,"reason":…}'}. It opens scope
     * {@code after + 1} once, for one executor, and is never honoured for a later scope.
     *
     * <p>{@code after} is the scope the operator decided about ({@link KeyHistory#scopes()}' last one,
     * as {@code inspect} shows it), and it must still be the key's latest scope: a repeat of the same
     * call after a worker used the authorization (a retried call whose first create was applied, a
     * second operator on the same ticket) is refused, naming the scopes opened since, instead of
     * authorizing the scope that redelivery consumed. So calling this twice authorizes once.
     * One authorization per consumed scope: when {@code after-<after>} exists already (a second
     * operator, a pasted recipe), nothing is written and the existing one is returned with
     * {@code created == false}; a create retried after a lost reply recognises itself.
     *
     * @param after the consumed scope the redelivery follows: the key's latest scope
     * @throws IllegalArgumentException when the key does not exist, cannot be read or is not consumed;
     *                                  when {@code after} is not its latest scope (earlier: the message
     *                                  names the scopes opened since and their states; later: there is no
     *                                  such scope); or when by/reason are blank. Nothing is written then.
     * @throws OncegateException        when ZooKeeper cannot be read or written
     */
    Authorized authorize(String key, int after, String by, String reason) throws InterruptedException;

    /**
     * Records that a person checked the destination and found the effect delivered: the key's
     * latest scope, {@code send_status_unknown} or armed without outcome, is read as
     * {@code sent_verified} from now on ({@code KEY/authorizations/reconciled-n}, which only
     * operators may create, beside the original records). It never produces {@code not_sent} and
     * never reopens the key. It races nothing: ZooKeeper decides. For a scope armed without
     * outcome, the reconciliation takes the scope's create-once outcome znode in the same multi, so
     * exactly one of it and the executor's own outcome lands: an executor still at work can no
     * longer record anything, and one whose {@code not_sent} came first leaves the key open in the
     * next scope, which this call then refuses. And a reconciliation never lands on a scope that an
     * authorization has meanwhile followed with a new one (both move or check the scope's version).
     * Reconciling a reconciled scope writes nothing and returns the existing reconciliation with
     * {@code created == false}; a multi retried after a lost reply recognises its own record
     * (its attempt id) and returns {@code created == true}.
     *
     * @throws IllegalArgumentException when the key does not exist, or its latest scope is neither
     *                                  {@code send_status_unknown} nor armed without outcome
     */
    Reconciled reconcile(String key, String by, String evidence) throws InterruptedException;

    /**
     * Retention: removes the whole record of every key whose latest scope ended
     * {@code sent_verified} or {@code send_status_unknown} longer than {@code olderThan} ago,
     * handing {@code each} what it removes (or would, with {@code dryRun}). <b>A removed key is
     * open again</b>: the next contender for that effect delivers it again. Open, leased and
     * armed scopes, unreadable keys and keys in an election are never touched.
     *
     * <p>Ages are the ZooKeeper server's, never a clock a writer or this host controls: "now" is
     * the creation time of a probe znode this call creates (and removes) under {@code NS/keys}, and
     * a key's age is the server's time of the record that decided its latest scope (the outcome's or
     * reconciliation's znode; {@link KeyHistory.Scope#recordedAt}). A key whose record's own time
     * disagrees with the server's by more than ten minutes (its writer's clock was off) is kept and
     * reported, not removed. The clock given to {@link Builder#clock} plays no part.
     */
    GcReport gc(Duration olderThan, boolean dryRun, Consumer<GcEntry> each) throws InterruptedException;

    /**
     * Access control for the whole namespace, afterwards: names {@code roles} in the genesis and
     * gives every znode of the namespace its role ACL from them — to turn access control on for a
     * namespace initialised without it, or to rotate credentials (new passwords are new digests).
     * Needs the admin: the client must be authenticated as the current admin (if any) and as the
     * new one, since the namespace's znodes change hands one by one and the genesis' own ACL last.
     *
     * <p>The genesis is rewritten first: its new version is the new <em>roles epoch</em>, which every
     * key creation checks, so a running gate that still writes with the old roles' ACLs fails its next
     * key creation, reads the genesis and creates the key with the new ones (and writes every later
     * record with them). Then passes over the namespace set every znode's role ACL until a pass finds
     * none left to change: they catch what an attempt already in flight created with the old ACLs
     * meanwhile. Running workers keep their old identities until restarted: after a rotation they
     * fail closed meanwhile; when access control was off, a worker that already authenticates as the
     * worker role goes on.
     *
     * @param each told every znode whose ACL was changed
     * @return how many znodes' ACLs were changed (the genesis included)
     * @throws OncegateException when znodes still appeared with other ACLs after five passes (a
     *                           writer that does not follow the roles epoch), and for the reasons of
     *                           every operator call
     */
    long applyRoles(Genesis.Roles roles, Consumer<String> each) throws InterruptedException;

    /**
     * A health check of the namespace as this client sees it ({@code oncegate doctor}): the genesis
     * as a gate judges it (and against this host's rollback witness, when the operator was built
     * with its {@link ZxidMarks}); the role of the identity whose digest id is {@code digestId}
     * (what {@link OncegateAcl#digest} gives for the client's {@code user:password}; null for an
     * unauthenticated client); with access control on, every znode of the namespace against its role
     * ACL (a walk that reads each znode's ACL, bucket by bucket: its time grows with the number of keys);
     * and the server's clock. To prove the create permission and read that clock it
     * creates one ephemeral znode, {@code NS/keys/doctor-N}, where the role may create (a worker,
     * the admin, anyone without access control); it goes with the client's session. Nothing else is written.
     *
     * @throws OncegateException when ZooKeeper cannot be read (unreachable, session lost)
     */
    Checkup checkup(String digestId) throws InterruptedException;

    /**
     * Which keys {@link #list} reports.
     *
     * @param state     only keys in this state (null: all); {@code SEND_STATUS_UNKNOWN} includes
     *                  armed-without-outcome keys, which read as unknown to every worker
     * @param olderThan only keys whose state is at least this old (null: any age)
     * @param limit     at most this many keys (0: no limit)
     */
    record ListQuery(ScopeState state, Duration olderThan, int limit) {
        public ListQuery {
            if (olderThan != null && olderThan.isNegative()) {
                throw new IllegalArgumentException("olderThan: must not be negative, got " + olderThan);
            }
            if (limit < 0) {
                throw new IllegalArgumentException("limit: must not be negative, got " + limit);
            }
        }

        /** Every key. */
        public static ListQuery all() {
            return new ListQuery(null, null, 0);
        }
    }

    /**
     * One key, as {@link #list} reports it: enough to tell the namespace's backlog (keys by
     * state, armed without outcome and since when, pending authorizations, unreadable records)
     * without reading each key again.
     *
     * @param key     the key
     * @param path    its znode
     * @param state   its latest scope's state; null when unreadable
     * @param scopes  how many scopes it has
     * @param since   when it entered that state, by the ZooKeeper server's clock (the time of the
     *                outcome's, reconciliation's or armed record's znode, else of the scope's last write);
     *                null when unreadable
     * @param record  the key record (destination, sha256), or null when unreadable
     * @param problem what could not be read, or null
     * @param unusedAuthorizations its redelivery authorizations that would open the next scope now
     *                             ({@link KeyHistory.AuthorizationStatus#UNUSED}): 0 or 1
     * @param unreadableRecords    how many of its records could not be read or contradict the
     *                             protocol ({@link KeyHistory#unreadable()}); 0 when {@code problem} is null
     */
    record KeySummary(String key, String path, ScopeState state, int scopes, Instant since, KeyHistory.KeyRecord record,
                      String problem, int unusedAuthorizations, int unreadableRecords) {
    }

    /**
     * What {@link #list} walked.
     *
     * @param scanned    keys read
     * @param listed     keys handed on
     * @param unreadable keys with an unreadable record
     */
    record ListReport(int scanned, int listed, int unreadable) {
    }

    /**
     * What {@link #backlog} read.
     *
     * @param indexed    whether the namespace has a backlog index (false: nothing was read)
     * @param entries    index entries of the kinds asked about
     * @param read       keys they nominated, each read and decoded
     * @param listed     keys handed on
     * @param stale      keys nominated whose records put them out of the backlog (stale or forged entries)
     * @param unreadable keys handed on with an unreadable record
     */
    record BacklogReport(boolean indexed, int entries, int read, int listed, int stale, int unreadable) {
    }

    /**
     * What {@link #checkIndex} found.
     *
     * @param walk     the walk, as {@link #list} reports it
     * @param indexed  whether the namespace has a backlog index
     * @param missing  entries the records call for that the index lacked (and, still, after a second read)
     * @param stale    entries the records contradict, or of keys that no longer exist
     * @param repaired entries created or removed by this walk
     * @param refused  why repairs stopped (this identity may not change the index), or null
     */
    record IndexCheck(ListReport walk, boolean indexed, int missing, int stale, int repaired, String refused) {
    }

    /**
     * The result of {@link #authorize}.
     *
     * @param path    the authorization's znode, {@code KEY/authorizations/after-<n>}
     * @param after   the consumed scope it redelivers after
     * @param created whether this call wrote it (false: one existed, and nothing was written)
     * @param by      who authorized (the existing record's author when not created; null when unreadable)
     * @param reason  why (the existing record's when not created)
     * @param status  what the authorization does now
     */
    record Authorized(String path, int after, boolean created, String by, String reason,
                      KeyHistory.AuthorizationStatus status) {
    }

    /**
     * The result of {@link #reconcile}.
     *
     * @param path           the reconciliation's znode
     * @param scope          the scope reconciled
     * @param created        whether this call wrote it (false: the scope was reconciled already)
     * @param reconciliation the reconciliation now in force
     */
    record Reconciled(String path, int scope, boolean created, KeyHistory.Reconciliation reconciliation) {
    }

    /**
     * One key {@link #gc} removed, or skipped.
     *
     * @param key     the key
     * @param path    its znode
     * @param state   its latest scope's state
     * @param since   when it entered that state, by the server's clock
     * @param removed whether its records were removed (false with dry run, or when skipped)
     * @param skipped why it was left alone, or null
     */
    record GcEntry(String key, String path, ScopeState state, Instant since, boolean removed, String skipped) {
    }

    /**
     * What {@link #gc} did.
     *
     * @param scanned keys read
     * @param removed keys removed (or, with dry run, that would be)
     * @param skipped keys past retention left alone (changed meanwhile, in an election, unreadable, or
     *                whose record's own time disagrees with the server's)
     * @param dryRun  whether nothing was removed
     */
    record GcReport(int scanned, int removed, int skipped, boolean dryRun) {
    }

    /**
     * Configures an {@link Operator}. Each setter validates its argument and may be called once.
     *
     * <p>Not thread-safe; the operator it builds is.
     */
    final class Builder {
        private final CuratorFramework client;
        private String namespace;
        private Clock clock;
        private ZxidMarks zxidMarks;
        private String host;

        private Builder(CuratorFramework client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /** ZooKeeper namespace, an absolute path; default {@value Gate#DEFAULT_NAMESPACE}. */
        public Builder namespace(String namespace) {
            once(this.namespace, "namespace");
            this.namespace = Layout.checkNamespace(namespace);
            return this;
        }

        /**
         * The clock for the times this operator writes into its records, and for the next attempt
         * {@link Operator#inspect} describes (whether a lease has lapsed, as a contender with this clock would
         * judge); default UTC system clock. Retention never reads it.
         */
        public Builder clock(Clock clock) {
            once(this.clock, "clock");
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** The rollback witness every read feeds ({@link ZxidMarks}); default in memory. */
        public Builder zxidMarks(ZxidMarks marks) {
            once(this.zxidMarks, "zxidMarks");
            this.zxidMarks = Objects.requireNonNull(marks, "zxidMarks");
            return this;
        }

        /** The host recorded in what this operator writes; default the local host name. */
        public Builder host(String host) {
            once(this.host, "host");
            this.host = BuilderChecks.host(host);
            return this;
        }

        /** Builds the operator. @throws IllegalStateException when the client is not started */
        public Operator build() {
            BuilderChecks.requireStarted(client, "an operator");
            String ns = namespace != null ? namespace : Gate.DEFAULT_NAMESPACE;
            NamespaceState state = new NamespaceState(client, ns, clock != null ? clock : Clock.systemUTC(),
                    zxidMarks != null ? zxidMarks : ZxidMarks.inMemory(), false);
            return new DefaultOperator(state, host != null ? host : BuilderChecks.localHost());
        }
    }
}
