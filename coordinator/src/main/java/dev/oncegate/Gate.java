package dev.oncegate;

import static dev.oncegate.BuilderChecks.once;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.StandardConnectionStateErrorPolicy;

/**
 * The at-most-once gate over one ZooKeeper namespace.
 *
 * <pre>{@code
 * Gate gate = Gate.builder(curator).namespace("/oncegate").taskId("report-42").build();
 * EffectKey key = EffectKey.of(Destination.stable("slack", "C024BE91L"), Path.of("report.pdf"));
 * try (Attempt attempt = gate.enter(key, Duration.ofSeconds(30))) {
 *     if (attempt.decision() instanceof Decision.Proceed) {
 *         attempt.checkpoint("picker-open");
 *         Crossing crossing = attempt.cross(ctx -> ActionResult.verified(slack.upload(file, ctx.token())));
 *     }
 * }
 * }</pre>
 *
 * <p>Thread-safe: one gate serves any number of threads, each with its own {@link Attempt}.
 * The caller owns the {@link CuratorFramework} (started, with Curator's default
 * {@link StandardConnectionStateErrorPolicy}) and the {@link MeterRegistry}; closing the gate
 * closes neither.
 */
public interface Gate extends AutoCloseable {

    /** The default namespace, {@code /oncegate}. */
    String DEFAULT_NAMESPACE = "/oncegate";

    /**
     * Checks a namespace: an absolute ZooKeeper path below the root, not under {@code /zookeeper}.
     *
     * @return the namespace
     * @throws IllegalArgumentException naming the namespace when it is malformed
     */
    static String checkNamespace(String namespace) {
        return Layout.checkNamespace(namespace);
    }

    /** A builder over a started, caller-owned client. */
    static Builder builder(CuratorFramework client) {
        return new Builder(client);
    }

    /**
     * Writes the namespace's genesis record if it has none ({@code oncegate init}).
     *
     * @return the namespace's genesis, and whether this call created it
     */
    static Initialization initialize(CuratorFramework client, String namespace) throws InterruptedException {
        return initialize(client, namespace, null, ZxidMarks.inMemory());
    }

    /**
     * {@link #initialize(CuratorFramework, String)} with access control: the genesis names the
     * three roles' digest ids (the README's "Access control"), every znode oncegate writes from then on gets its role
     * ACL, and the namespace's own znodes get theirs now. When the namespace's znode existed before this genesis,
     * whatever was under it (created by anyone, with any ACL) is given its role ACL too, as {@code oncegate acl}
     * gives it, so that no znode of an initialised namespace stays open to those the roles leave out; a znode this
     * client may not read or change fails the call (OncegateException) after every other one has its role ACL.
     * The client should be authenticated as the admin. The genesis is recorded in {@code marks} (and they are
     * flushed), so a later rollback of this namespace is caught by this host. An existing genesis is left as it
     * is, whatever roles it names (see {@link Initialization#genesis()}).
     *
     * @param roles null for no access control
     */
    static Initialization initialize(CuratorFramework client, String namespace, Genesis.Roles roles, ZxidMarks marks)
            throws InterruptedException {
        return initialize(client, namespace, roles, marks, false);
    }

    /**
     * {@link #initialize(CuratorFramework, String, Genesis.Roles, ZxidMarks)} on nobody's request
     * when {@code automatic} (what {@code oncegate server} does on an empty data directory): the
     * genesis says so ({@link Genesis#automatic()}), and a host whose zxid marks know another life of
     * the namespace then stops its workers ({@code namespace_replaced}) until the admin accepts it.
     */
    static Initialization initialize(CuratorFramework client, String namespace, Genesis.Roles roles, ZxidMarks marks,
                                     boolean automatic) throws InterruptedException {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(marks, "marks");
        String ns = Layout.checkNamespace(namespace);
        java.util.concurrent.atomic.AtomicLong seen = new java.util.concurrent.atomic.AtomicLong();
        ScopeProtocol protocol = new ScopeProtocol(client, ns, Clock.systemUTC(), z -> seen.accumulateAndGet(z, Math::max),
                () -> Acls.of(roles));
        try {
            boolean existed = roles != null && client.checkExists().forPath(ns) != null;
            OperatorWrites.GenesisResult result = protocol.operator().createGenesis(roles, automatic);
            protocol.reads().readGenesis(); // the genesis write's zxid, for the marks
            marks.observe(ns, result.genesis().id(), seen.get());
            marks.flush();
            if (existed && result.created()) {
                AclWalk.secure(client, ns, Acls.of(roles));
            }
            return new Initialization(result.genesis(), result.created());
        } catch (InterruptedException | OncegateException e) {
            throw e;
        } catch (Exception e) {
            throw new OncegateException("could not initialise namespace " + namespace + ": " + e
                    + " (check the connect string, that ZooKeeper is up, and this identity's permissions)", e);
        }
    }

    /**
     * Accepts that the namespace's ensemble was restored from an older snapshot, once the restore
     * has been dealt with (deploy/RUNBOOK.md, 'ZooKeeper data lost, or restored from a backup'): the
     * genesis counts one more accepted restore ({@link Genesis#restoresAccepted()}), in a conditional
     * write of the genesis that moves its roles epoch. A host whose rollback witness caught the
     * restore stops every attempt at the namespace ({@code zookeeper_rolled_back}), however far the
     * restored ensemble has moved on since, until it reads a genesis that counts more accepted
     * restores than its marks knew; its witness then starts afresh for the namespace
     * ({@link Genesis#witnessLife()}). The genesis is admin-only when access control is on, so the
     * client must be authenticated as the admin; the call is not idempotent (each one counts). The
     * write's zxid is recorded in {@code marks} under the new life (and they are flushed).
     *
     * @return the genesis as written
     * @throws OncegateException when the namespace has no genesis, or the write fails (a permission, the connection)
     */
    static Genesis acceptRestore(CuratorFramework client, String namespace, ZxidMarks marks) throws InterruptedException {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(marks, "marks");
        String ns = Layout.checkNamespace(namespace);
        java.util.concurrent.atomic.AtomicLong seen = new java.util.concurrent.atomic.AtomicLong();
        ScopeProtocol protocol = new ScopeProtocol(client, ns, Clock.systemUTC(), z -> seen.accumulateAndGet(z, Math::max),
                () -> Acls.OPEN);
        String path = Layout.genesis(ns);
        try {
            org.apache.zookeeper.data.Stat stat = new org.apache.zookeeper.data.Stat();
            byte[] data;
            try {
                data = client.getData().storingStatIn(stat).forPath(path);
            } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
                throw new OncegateException("namespace " + ns + " has no genesis record (" + path + "): there is no restore"
                        + " to accept; if its data was lost, see deploy/RUNBOOK.md, 'ZooKeeper data lost, or restored from"
                        + " a backup'", e);
            }
            Genesis accepted = protocol.operator().acceptRestore(Records.decodeGenesis(path, data), stat.getVersion());
            protocol.reads().readGenesis(); // the write's zxid, for the marks
            marks.observe(ns, accepted.witnessLife(), seen.get());
            marks.flush();
            return accepted;
        } catch (InterruptedException | OncegateException e) {
            throw e;
        } catch (org.apache.zookeeper.KeeperException.BadVersionException e) {
            throw new OncegateException("the genesis of namespace " + ns + " changed while the restore was being accepted"
                    + " (an `oncegate acl` or another acceptance at the same time): nothing was written; run it again", e);
        } catch (Exception e) {
            throw new OncegateException("could not accept the restore of namespace " + ns + ": " + e
                    + " (check the connect string, that ZooKeeper is up, and that this is the admin identity)", e);
        }
    }

    /**
     * The result of {@link #initialize}.
     *
     * @param genesis the namespace's genesis record
     * @param created whether this call wrote it (false: it already existed and nothing changed)
     */
    record Initialization(Genesis genesis, boolean created) {
    }

    /** Enters without waiting for an active executor: equivalent to {@code enter(key, Duration.ZERO)}. */
    default Attempt enter(EffectKey key) throws InterruptedException {
        return enter(key, Duration.ZERO);
    }

    /**
     * Contends for the effect's current scope. Returns once a decision is reached: proceed,
     * or one of the stops. When another executor is active, waits up to {@code wait} for its
     * final decision (and contends again if it proves {@code not_sent}). An election on an open
     * scope is awaited even with no wait: normally one round trip; when the elected leader does
     * not act, any contender may take the scope after one lease TTL, and a contender gives up
     * ({@code stop_busy}) after two.
     *
     * @param wait how long to wait for another active executor; zero for not at all
     * @return the attempt; call {@link Attempt#close()} when done (try-with-resources)
     * @throws InterruptedException when interrupted before a decision (an interrupt that arrives
     *     while the lease write's reply is taken in counts as before): nothing was armed, and a
     *     lease this contender had just taken (even one whose reply the interrupt cut off) was
     *     released, so the next contender need not wait out its TTL
     */
    Attempt enter(EffectKey key, Duration wait) throws InterruptedException;

    /**
     * Everything recorded about a key (64 hex characters), read without a lock: {@code
     * operator().inspect(key)}. Unreadable records are part of the answer, not an exception.
     *
     * @throws OncegateException when ZooKeeper cannot be read or the namespace has no genesis
     */
    KeyHistory inspect(String key) throws InterruptedException;

    /**
     * The operator's side of this gate's namespace, over the same client (inspect, list,
     * authorize, reconcile, gc): see {@link Operator}.
     */
    Operator operator();

    /** The namespace this gate works in. */
    String namespace();

    /**
     * Stops listening to the client, waits (up to 2 s) for the elections its attempts left to be
     * closed, so that closing the client next finds none under way, and flushes its
     * {@link ZxidMarks}. Attempts still open keep working until closed.
     */
    @Override
    void close();

    /**
     * Configures a {@link Gate}. Each setter validates its argument (null → NPE naming the
     * field, bad value → IAE) and may be called once.
     *
     * <p>Not thread-safe; the gate it builds is.
     */
    final class Builder {
        private final CuratorFramework client;
        private String namespace;
        private MeterRegistry registry;
        private Clock clock;
        private Duration leaseTtl;
        private Duration connectTimeout;
        private String taskId;
        private String host;
        private Boolean initializeNamespace;
        private ZxidMarks zxidMarks;

        private Builder(CuratorFramework client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /** ZooKeeper namespace, an absolute path; default {@value Gate#DEFAULT_NAMESPACE}. */
        public Builder namespace(String namespace) {
            once(this.namespace, "namespace");
            this.namespace = Layout.checkNamespace(namespace);
            return this;
        }

        /** Where the gate registers its meters; default: none are published. */
        public Builder meterRegistry(MeterRegistry registry) {
            once(this.registry, "meterRegistry");
            this.registry = Objects.requireNonNull(registry, "meterRegistry");
            return this;
        }

        /** The clock for lease expiry and deadlines (liveness only, never safety); default UTC system clock. */
        public Builder clock(Clock clock) {
            once(this.clock, "clock");
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * How long a lease lasts without a checkpoint before another contender may take it over
         * (fencing the holder); default 30 s. Also bounds an election on an open scope.
         */
        public Builder leaseTtl(Duration leaseTtl) {
            once(this.leaseTtl, "leaseTtl");
            this.leaseTtl = BuilderChecks.atLeast("leaseTtl", leaseTtl, Duration.ofMillis(100));
            return this;
        }

        /** How long {@code enter} waits for a ZooKeeper connection before failing closed; default 15 s. */
        public Builder connectTimeout(Duration connectTimeout) {
            once(this.connectTimeout, "connectTimeout");
            this.connectTimeout = BuilderChecks.atLeast("connectTimeout", connectTimeout, Duration.ZERO);
            return this;
        }

        /** This worker's task id, recorded in every lease, armed and outcome record; default {@code host:pid}. */
        public Builder taskId(String taskId) {
            once(this.taskId, "taskId");
            Objects.requireNonNull(taskId, "taskId");
            if (taskId.isEmpty() || taskId.length() > 256) {
                throw new IllegalArgumentException("taskId: must be 1 to 256 characters, got " + taskId.length());
            }
            Records.requireWellFormed("taskId", taskId);
            this.taskId = taskId;
            return this;
        }

        /** The host name recorded in records; default the local host name. */
        public Builder host(String host) {
            once(this.host, "host");
            this.host = BuilderChecks.host(host);
            return this;
        }

        /**
         * Whether the gate may write the namespace's genesis record when it has none. Default
         * false: an uninitialised namespace stops every contender with {@code unavailable}, since
         * lost ZooKeeper data must never look like a fresh start. Even when true, a namespace that
         * this gate's {@link #zxidMarks zxid marks} saw before ({@link ZxidMarks#lives}) is not
         * initialised again: it stops contenders as if this were false.
         */
        public Builder initializeNamespace(boolean initialize) {
            once(this.initializeNamespace, "initializeNamespace");
            this.initializeNamespace = initialize;
            return this;
        }

        /**
         * Where the gate remembers the highest zxid it has seen for its namespace, to catch an
         * ensemble rolled back to an older snapshot ({@link ZxidMarks}); default
         * {@link ZxidMarks#inMemory()}. Pass {@link ZxidMarks#file} to share the marks with the other
         * processes of this host. The gate flushes them when it closes.
         */
        public Builder zxidMarks(ZxidMarks marks) {
            once(this.zxidMarks, "zxidMarks");
            this.zxidMarks = Objects.requireNonNull(marks, "zxidMarks");
            return this;
        }

        /**
         * Builds the gate.
         *
         * @throws IllegalStateException    when the client is not started
         * @throws IllegalArgumentException when the client uses a connection-state error policy
         *                                  other than Curator's standard one
         */
        public Gate build() {
            BuilderChecks.requireStarted(client, "a gate");
            if (!(client.getConnectionStateErrorPolicy() instanceof StandardConnectionStateErrorPolicy)) {
                throw new IllegalArgumentException("client: uses " + client.getConnectionStateErrorPolicy().getClass().getSimpleName()
                        + "; oncegate needs StandardConnectionStateErrorPolicy (SUSPENDED must remove authority)");
            }
            String h = host != null ? host : BuilderChecks.localHost();
            long pid = ProcessHandle.current().pid();
            String task = taskId != null ? taskId : h + ":" + pid;
            return new DefaultGate(new CuratorOps(client, task),
                    namespace != null ? namespace : DEFAULT_NAMESPACE,
                    registry, // none given: no meters (nobody could read them)
                    clock != null ? clock : Clock.systemUTC(),
                    leaseTtl != null ? leaseTtl : Duration.ofSeconds(30),
                    connectTimeout != null ? connectTimeout : Duration.ofSeconds(15),
                    task, h, pid,
                    Boolean.TRUE.equals(initializeNamespace), zxidMarks != null ? zxidMarks : ZxidMarks.inMemory());
        }
    }
}
