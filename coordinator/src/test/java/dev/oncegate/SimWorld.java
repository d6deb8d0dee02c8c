package dev.oncegate;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * One seeded history of oncegate: the protocol's own code ({@link DefaultGate}, {@link DefaultAttempt},
 * {@link ContentionRules}, {@link ScopeProtocol}, {@link DefaultOperator}) run by contenders, an
 * operator and a rogue holding the worker credential, on an in-memory ZooKeeper ({@link SimZooKeeper}),
 * with faults (lost replies, connection losses, session expiry, crashes, clock skew and jumps) chosen by
 * the seed, and the SPEC §4 invariants ({@link SimChecker}) held after every step.
 *
 * <p>Not thread-safe: one history runs on its scheduler, one actor at a time.
 */
final class SimWorld {

    static final String NS = "/sim";
    static final String WORKER = "worker:w-s3cret";
    static final String OPERATOR = "ops:o-s3cret";
    static final String ADMIN = "admin:a-s3cret";
    /** Virtual time starts here (a fixed instant, so that histories replay exactly). */
    static final long EPOCH = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();
    static final Duration RETENTION = Duration.ofDays(30);
    /**
     * The history's gates' meters: a registry without children records nothing. One per history (a registry
     * shared by all histories grows with every gate, and each new gate searches it).
     */
    private final io.micrometer.core.instrument.MeterRegistry meters =
            new io.micrometer.core.instrument.composite.CompositeMeterRegistry();

    /**
     * What a history has in it; each dimension can be turned off when a failure is shrunk.
     *
     * @param contenders    honest workers (each enters one key once, some enter again: a resumed task)
     * @param keys          effect keys they contend for
     * @param operator      an operator who authorizes, reconciles and runs gc
     * @param rogue         an actor with the worker credential that writes what it may
     * @param faults        lost replies and connection losses on calls, session expiry, crashes
     * @param clocks        per-actor clock skew and jumps (days)
     * @param maxSteps      scheduler steps before the faults stop and the world quiesces
     * @param wipe          the ensemble loses its data while the others act (a {@code deleteall} of the
     *                      namespace, bottom-up, one znode a call), and is sometimes initialised again
     */
    record Config(int contenders, int keys, boolean operator, boolean rogue, boolean faults, boolean clocks,
                  int maxSteps, boolean wipe, boolean interrupts) {

        /** A world without a wipe (the seven dimensions the simulator had before it). */
        Config(int contenders, int keys, boolean operator, boolean rogue, boolean faults, boolean clocks, int maxSteps) {
            this(contenders, keys, operator, rogue, faults, clocks, maxSteps, false, false);
        }

        /** A world without interrupts (the eight dimensions the simulator had before them). */
        Config(int contenders, int keys, boolean operator, boolean rogue, boolean faults, boolean clocks, int maxSteps,
               boolean wipe) {
            this(contenders, keys, operator, rogue, faults, clocks, maxSteps, wipe, false);
        }

        static Config random(SplittableRandom r) {
            // The wipe is drawn last, so that every other dimension of a seed's world is what it was before it;
            // never with the rogue (see wipe).
            Config c = new Config(2 + r.nextInt(4), 1 + r.nextInt(2), r.nextInt(3) > 0, r.nextInt(3) == 0,
                    r.nextInt(3) > 0, r.nextInt(3) == 0, 150 + r.nextInt(350));
            c = !c.rogue() && r.nextInt(4) == 0 ? c.withWipe(true) : c;
            // Interrupts are drawn after the wipe, for the same reason; they need faults on.
            return c.faults() && r.nextInt(3) == 0 ? c.withInterrupts(true) : c;
        }

        /**
         * This world with interrupts, or without: a contender's call may have its wait for the reply
         * interrupted (a SIGTERM to the worker) after the server applied it; the worker then stops.
         */
        Config withInterrupts(boolean on) {
            return new Config(contenders, keys, operator, rogue, faults, clocks, maxSteps, wipe, on);
        }

        /**
         * This world with a wipe, or without. A wipe never meets the rogue: a deleteall under way deletes a
         * scope's armed record before its scope, and a worker credential that then rewrites the scope's data
         * as never armed makes it read open (README, threat model: the one residual of an admin's deleteall
         * racing live workers); so a world with both would only find that again.
         */
        Config withWipe(boolean on) {
            return new Config(contenders, keys, operator, rogue && !on, faults, clocks, maxSteps, on, interrupts);
        }


        /** Seven fields for a world without a wipe (as replay commands printed before it read), eight with. */
        String encode() {
            return contenders + "," + keys + "," + operator + "," + rogue + "," + faults + "," + clocks + "," + maxSteps
                    + (wipe || interrupts ? "," + wipe : "") + (interrupts ? ",true" : "");
        }

        static Config decode(String text) {
            String[] p = text.split(",");
            return new Config(Integer.parseInt(p[0]), Integer.parseInt(p[1]), Boolean.parseBoolean(p[2]),
                    Boolean.parseBoolean(p[3]), Boolean.parseBoolean(p[4]), Boolean.parseBoolean(p[5]),
                    Integer.parseInt(p[6]), p.length > 7 && Boolean.parseBoolean(p[7]), p.length > 8 && Boolean.parseBoolean(p[8]));
        }
    }

    /** What a history came to. */
    record Result(long seed, Config config, List<String> violations, List<String> trace, int steps, Map<String, Integer> rules) {
        boolean failed() {
            return !violations.isEmpty();
        }
    }

    final long seed;
    final Config config;
    final SimScheduler sched;
    final SimZooKeeper server;
    final SimChecker checker;
    final List<EffectKey> keys = new ArrayList<>();
    final List<Object> trace = new ArrayList<>();
    /** Rules and situations the history exercised (for the coverage report). */
    final Map<String, Integer> rules = new TreeMap<>();
    private final Map<SimClient, SimScheduler.Actor> owners = new HashMap<>();
    /** The contenders' clients: the calls a world with interrupts may interrupt. */
    private final java.util.Set<SimClient> contenderClients = new java.util.HashSet<>();
    private final List<SimClient> clients = new ArrayList<>();
    private final Map<SimScheduler.Actor, Long> skews = new LinkedHashMap<>();
    private final long leaseTtlMs;
    private final Genesis.Roles roles;
    private boolean faultsOn;
    private int step;

    SimWorld(long seed, Config config) {
        this.seed = seed;
        this.config = config;
        this.sched = new SimScheduler(seed, EPOCH);
        this.server = new SimZooKeeper(sched::now);
        this.leaseTtlMs = 2_000 + sched.random.nextInt(8) * 1_000L;
        this.roles = new Genesis.Roles(OncegateAcl.digest(WORKER), OncegateAcl.digest(OPERATOR), OncegateAcl.digest(ADMIN));
        this.checker = new SimChecker(this);
        this.faultsOn = config.faults();
    }

    /** Runs the history to its end: its violations (empty when every invariant held). */
    Result run() {
        try {
            setUp();
            loop(config.maxSteps(), true);
            quiesce();
        } catch (SimChecker.Violation v) {
            // recorded by the checker
        } catch (Exception | AssertionError e) {
            checker.violationQuietly("the simulation itself failed: " + describe(e));
        } finally {
            sched.shutdown();
        }
        for (SimScheduler.Actor a : sched.actors()) {
            if (a.failure != null && !(a.failure instanceof SimScheduler.Abort) && !(a.failure instanceof SimChecker.Violation)) {
                checker.violationQuietly("actor " + a + " failed: " + describe(a.failure));
            }
        }
        return new Result(seed, config, checker.violations(), trace.stream().map(Object::toString).toList(), step, rules);
    }

    // ---- setting up -----------------------------------------------------------------------------

    private void setUp() throws Exception {
        SimClient admin = client("admin", ADMIN, false);
        ScopeProtocol init = new ScopeProtocol(admin, NS, clock(0), z -> { }, () -> Acls.of(roles));
        init.operator().createGenesis(roles);
        for (int k = 0; k < config.keys(); k++) {
            keys.add(EffectKey.of(Destination.stable("sim", "dest-" + k),
                    ("content " + seed + " " + k).getBytes(StandardCharsets.UTF_8)));
        }
        for (int i = 0; i < config.contenders(); i++) {
            spawnContender("w" + i, keys.get(sched.random.nextInt(keys.size())), sched.random.nextInt(4) == 0);
        }
        if (config.operator()) {
            spawnOperator();
        }
        if (config.rogue()) {
            spawnRogue();
        }
        if (config.wipe()) {
            spawnWipe();
        }
    }

    /** A client of the simulated server, authenticated as {@code credential}, its calls scheduled and faulted. */
    SimClient client(String name, String credential, boolean faulty) {
        SimClient c = new SimClient(server, name, 6_000, OncegateAcl.provider(NS, () -> roles)::getAclForPath)
                .authorization("digest", credential.getBytes(StandardCharsets.UTF_8))
                .retries(3)
                .faults((client, op, path) -> beforeCall(client, op, path, faulty))
                .waits(new SimClient.Waits() {
                    @Override
                    public void await(SimClient client, Object monitor, long millis) throws InterruptedException {
                        sched.await(monitor, millis);
                    }

                    @Override
                    public boolean awaitConnected(SimClient client, Duration timeout) throws InterruptedException {
                        return awaitConnection(client, timeout);
                    }
                })
                .start();
        clients.add(c);
        return c;
    }

    private SimFaults.Fault beforeCall(SimClient client, String op, String path, boolean faulty) {
        sched.yieldPoint(op + " " + path);
        if (!faulty || !faultsOn || sched.current() == null) {
            return SimFaults.Fault.NONE;
        }
        int roll = sched.random.nextInt(1000);
        if (roll < 15) {
            count("fault: call failed before the server");
            return SimFaults.Fault.FAIL_BEFORE;
        }
        if (roll < 35 && !op.startsWith("get") && !op.equals("exists")) {
            count("fault: reply lost after the server applied " + op);
            return SimFaults.Fault.LOSE_REPLY;
        }
        if (roll >= 996 && config.interrupts() && contenderClients.contains(client)) {
            count("fault: interrupted waiting for the reply to " + op);
            if (op.equals("multiOnce")) {
                checker.armingInterrupted(owners.get(client)); // the executor records not_sent without invoking
            }
            return SimFaults.Fault.INTERRUPT_WAIT;
        }
        return SimFaults.Fault.NONE;
    }

    /** Waits (virtual time) for the client to be connected again, up to {@code timeout}. */
    private boolean awaitConnection(SimClient client, Duration timeout) throws InterruptedException {
        long until = sched.now() + timeout.toMillis();
        Object monitor = new Object();
        synchronized (monitor) {
            while (!client.connected() && sched.now() < until) {
                sched.await(monitor, Math.min(200, until - sched.now()));
            }
        }
        return client.connected();
    }

    /** The clock an actor with {@code skew} reads. */
    Clock clock(long skewMillis) {
        return new Clock() {
            @Override
            public ZoneOffset getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                throw new UnsupportedOperationException();
            }

            @Override
            public long millis() {
                return sched.now() + skewMillis;
            }

            @Override
            public Instant instant() {
                return Instant.ofEpochMilli(millis());
            }
        };
    }

    private long randomSkew() {
        if (!config.clocks() || sched.random.nextInt(3) > 0) {
            return 0;
        }
        long days = sched.random.nextInt(81) - 40;
        return Duration.ofDays(days).toMillis() + sched.random.nextInt(600_000);
    }

    // ---- actors ---------------------------------------------------------------------------------

    private void spawnContender(String name, EffectKey key, boolean resumes) {
        long skew = randomSkew();
        SimScheduler.Actor[] self = new SimScheduler.Actor[1];
        self[0] = sched.spawn(name, () -> {
            SimClient c = client(name, WORKER, true);
            owners.put(c, self[0]);
            contenderClients.add(c);
            DefaultGate gate = new DefaultGate(c, NS, meters, clock(skew), Duration.ofMillis(leaseTtlMs),
                    Duration.ofSeconds(5), name, "sim-host", 1000 + self[0].index, false, ZxidMarks.inMemory());
            int entries = resumes ? 2 : 1;
            for (int e = 0; e < entries; e++) {
                try {
                    contend(self[0], gate, key);
                } catch (InterruptedException signalled) {
                    // A SIGTERM: the worker stops here, as `oncegate run` exits; its session stays for the checker.
                    Thread.interrupted();
                    String where = signalled.getMessage() == null ? "?" : signalled.getMessage().startsWith("interrupted while crossing")
                            ? "crossing" : signalled.getMessage().replaceAll(".* to (\\w+) .*", "$1");
                    count("worker stopped by an interrupt: " + where);
                    String left = leftALease(name, c, key);
                    if (left != null && left.endsWith("present")) { // a liveness bug to trace: say where to replay it
                        System.out.println("simulation: seed " + seed + " config " + config.encode()
                                + ": an interrupted worker left an unarmed lease whose election node is present " + signalled.getMessage());
                    }
                    count("worker stopped by an interrupt: " + (left == null ? "left no lease"
                            : "left an unarmed scope leased (it lapses after its TTL), " + left + ", interrupted in " + where));
                    return;
                }
            }
        });
        skews.put(self[0], skew);
    }

    private void contend(SimScheduler.Actor self, DefaultGate gate, EffectKey key) throws Exception {
        Duration wait = Duration.ofMillis(sched.random.nextInt(3) == 0 ? 0 : sched.random.nextInt((int) leaseTtlMs * 4));
        long started = sched.now();
        try (Attempt attempt = gate.enter(key, wait)) {
            checker.entered(self, key, wait, started, attempt.decision());
            count("decision: " + describe(attempt.decision()));
            if (!(attempt.decision() instanceof Decision.Proceed)) {
                return;
            }
            if (sched.random.nextBoolean()) {
                Decision checked = attempt.checkpoint("picker");
                count("checkpoint: " + describe(checked));
                if (!(checked instanceof Decision.Proceed)) {
                    return;
                }
            }
            Crossing crossing = attempt.cross(context -> deliver(self, context));
            count("crossing: " + (crossing instanceof Crossing.Crossed c ? c.outcome() + (c.recorded() ? "" : " unrecorded")
                    : "refused " + ((Crossing.Refused) crossing).stop().reason()));
            if (Thread.interrupted()) {
                // interrupted while arming: the crossing says what became of it, and the worker stops
                throw new InterruptedException("interrupted while crossing: " + (crossing instanceof Crossing.Crossed c
                        ? c.outcome() : "refused " + ((Crossing.Refused) crossing).stop().reason().wireName()));
            }
        }
    }

    /**
     * Whether the worker left a scope of {@code key} leased without arming it: null if not; else
     * whether the lease's election node is still there. A release is a CAS that checks that node
     * (it binds the write to the scope's incarnation), so one whose node is gone (the wipe's deleteall,
     * or the session's end) is refused by design; a lease left with its node present would be a bug.
     */
    private String leftALease(String name, SimClient c, EffectKey key) {
        String keyPath = key.path(NS);
        if (server.stat(keyPath) == null) {
            return null;
        }
        String session = Long.toHexString(c.sessionId());
        for (String child : server.children(keyPath)) {
            if (!child.chars().allMatch(Character::isDigit)) {
                continue;
            }
            String scopePath = keyPath + "/" + child;
            try {
                Records.Scope scope = Records.decodeScope(scopePath, server.data(scopePath));
                KeyHistory.Lease lease = scope.lease();
                if (!scope.armed() && lease != null && lease.holder().task().equals(name)
                        && lease.holder().session().equals(session)) {
                    return server.stat(lease.electionNode()) == null ? "its election node gone (the release CAS checks it)"
                            : "its election node present";
                }
            } catch (RuntimeException unreadable) {
                // a rogue's forgery: not this worker's lease
            }
        }
        return null;
    }

    /** The action: the boundary. The checker learns of every crossing before anything is sent. */
    private ActionResult deliver(SimScheduler.Actor self, BoundaryAction.Context context) throws Exception {
        SimChecker.Crossed crossed = checker.crossing(self, context);
        if (sched.random.nextInt(4) == 0) {
            Object monitor = new Object();
            synchronized (monitor) {
                sched.await(monitor, sched.random.nextInt((int) leaseTtlMs * 3)); // a slow provider
            }
        }
        int roll = sched.random.nextInt(10);
        if (roll < 6) {
            crossed.result = "sent_verified";
            return ActionResult.verified("receipt-" + context.scope());
        }
        if (roll < 8) {
            crossed.result = "not_sent";
            throw new ProvenNotSentException("the provider refused before sending");
        }
        crossed.result = "unknown";
        return ActionResult.unconfirmed("no answer from the provider");
    }

    private void spawnOperator() {
        long skew = randomSkew();
        SimScheduler.Actor[] self = new SimScheduler.Actor[1];
        self[0] = sched.spawn("operator", () -> {
            SimClient c = client("operator", OPERATOR, true);
            owners.put(c, self[0]);
            NamespaceState state = new NamespaceState(c, NS, clock(skew), ZxidMarks.inMemory(), false);
            DefaultOperator operator = new DefaultOperator(state, "ops-host");
            SimClient adminClient = client("retention", ADMIN, true); // gc deletes keys: the admin's job
            owners.put(adminClient, self[0]);
            DefaultOperator retention = new DefaultOperator(new NamespaceState(adminClient, NS, clock(skew),
                    ZxidMarks.inMemory(), false), "ops-host");
            int actions = 1 + sched.random.nextInt(4);
            for (int i = 0; i < actions; i++) {
                pause(leaseTtlMs * 4);
                EffectKey key = keys.get(sched.random.nextInt(keys.size()));
                int what = sched.random.nextInt(10);
                try {
                    if (what < 4) {
                        KeyHistory seen = operator.inspect(key.key());
                        int after = Math.max(0, seen.scopes().size() - 1 - (sched.random.nextInt(4) == 0 ? 1 : 0));
                        Operator.Authorized a = operator.authorize(key.key(), after, "ops", "simulated redelivery");
                        checker.authorized(key, after, a);
                        count("operator: authorize " + (a.created() ? "created" : "existed"));
                    } else if (what < 7) {
                        Operator.Reconciled r = operator.reconcile(key.key(), "ops", "provider log says delivered");
                        checker.reconciled(key, r);
                        count("operator: reconcile " + (r.created() ? "created" : "existed"));
                    } else {
                        if (config.clocks() && sched.random.nextBoolean()) {
                            long days = 25 + sched.random.nextInt(10);
                            long from = sched.now();
                            sched.advanceTo(from + Duration.ofDays(days).toMillis());
                            checker.jumped(from, sched.now());
                            trace("time jumps " + days + " days");
                        }
                        Operator.GcReport report = retention.gc(RETENTION, false, entry -> {
                            if (entry.removed()) {
                                checker.removed(entry);
                            }
                        });
                        count("operator: gc removed " + (report.removed() > 0 ? "some" : "none"));
                    }
                } catch (OncegateException | IllegalArgumentException | IllegalStateException refused) {
                    count("operator: refused (" + refused.getClass().getSimpleName() + ": "
                            + String.valueOf(refused.getMessage()).replaceAll("[0-9a-f]{64}", "KEY").split("[:(]")[0] + ")");
                }
            }
        });
        skews.put(self[0], skew);
    }

    /** The rogue: the worker credential, used for anything ZooKeeper lets it do. */
    private void spawnRogue() {
        SimScheduler.Actor[] self = new SimScheduler.Actor[1];
        self[0] = sched.spawn("rogue", () -> {
            SimClient c = client("rogue", WORKER, false);
            owners.put(c, self[0]);
            int moves = 3 + sched.random.nextInt(8);
            for (int i = 0; i < moves; i++) {
                pause(leaseTtlMs);
                try {
                    rogueMove(c);
                } catch (KeeperException e) {
                    count("rogue: refused " + e.code());
                }
            }
        });
    }

    private void rogueMove(SimClient c) throws Exception {
        EffectKey key = keys.get(sched.random.nextInt(keys.size()));
        String keyPath = Layout.keyPath(NS, key.key());
        if (c.exists(keyPath, null) == null) {
            count("rogue: no key yet");
            return;
        }
        List<String> children = c.getChildren(keyPath, null);
        int latest = children.stream().mapToInt(Layout::scopeNumber).max().orElse(0);
        int n = sched.random.nextInt(latest + 1);
        String scopePath = Layout.scope(keyPath, n);
        Instant now = Instant.ofEpochMilli(sched.now());
        String secret = Records.newSecret();
        Actor me = new Actor("rogue", "rogue-host", 666, "0", Records.newAttemptId());
        switch (sched.random.nextInt(8)) {
            case 0 -> { // un-arm and drop the lease
                c.setData(scopePath, Records.scope(new Records.Scope("initial", now, null, false, false)), -1);
                count("rogue: rewrote scope " + n + " open");
            }
            case 1 -> { // open the next scope by hand
                c.create(Layout.scope(keyPath, latest + 1), Records.scope(new Records.Scope("initial", now, null, false, false)),
                        CreateMode.PERSISTENT, null, null, false);
                count("rogue: created scope " + (latest + 1));
            }
            case 2 -> { // forge an armed record (and its outcome child)
                FencingToken token = new FencingToken(1, 1);
                c.create(Layout.armed(scopePath), Records.armed(new KeyHistory.Armed(me, token, List.of(), now), secret),
                        CreateMode.PERSISTENT, null, null, false);
                count("rogue: forged armed " + n);
            }
            case 3 -> { // forge not_sent over the outcome
                c.setData(Layout.outcome(scopePath), Records.outcome(Records.outcomeRecord(Outcome.NOT_SENT, "forged", me,
                        new FencingToken(1, 1), now), secret), -1);
                count("rogue: forged not_sent " + n);
            }
            case 4 -> { // delete the election nodes
                String latch = Layout.latch(scopePath);
                if (c.exists(latch, null) != null) {
                    for (String node : c.getChildren(latch, null)) {
                        c.delete(latch + "/" + node, -1);
                        count("rogue: deleted an election node");
                    }
                }
            }
            case 5 -> { // forge an authorization
                c.create(Layout.authorization(keyPath, n), Records.authorization(new Records.Authorization(
                        "rogue", "forged", now, me)), CreateMode.PERSISTENT, null, null, false);
                count("rogue: forged authorization after-" + n);
            }
            case 6 -> { // delete the outcome or the armed record
                c.delete(sched.random.nextBoolean() ? Layout.outcome(scopePath) : Layout.armed(scopePath), -1);
                count("rogue: deleted a record");
            }
            default -> { // rewrite the armed record
                c.setData(Layout.armed(scopePath), Records.armed(new KeyHistory.Armed(me, new FencingToken(1, 1), List.of(), now),
                        secret), -1);
                count("rogue: rewrote armed " + n);
            }
        }
    }

    /**
     * The ensemble loses its data (SPEC §4.7): an admin's {@code deleteall} of the namespace while the others
     * act, as ZooKeeper's own runs it (the tree listed, then deleted deepest first, one znode a call, what
     * cannot be deleted left for the next pass), and then, in half the histories, {@code oncegate init}
     * again: a new genesis, a new namespace life. Every gate that saw the old life must stop from then on;
     * only a gate that starts in the new life may deliver there.
     */
    private void spawnWipe() {
        SimScheduler.Actor[] self = new SimScheduler.Actor[1];
        self[0] = sched.spawn("wipe", () -> {
            SimClient c = client("wipe", ADMIN, false);
            owners.put(c, self[0]);
            pause(leaseTtlMs * 6);
            trace("the ensemble loses its data: deleteall " + NS);
            checker.wipeStarts();
            for (int pass = 0; pass < 5 && server.stat(NS) != null; pass++) {
                List<String> listed = new ArrayList<>(server.paths(NS));
                listed.sort(java.util.Comparator.comparingLong((String p) -> p.chars().filter(ch -> ch == '/').count())
                        .reversed().thenComparing(java.util.Comparator.naturalOrder()));
                for (String path : listed) {
                    try {
                        c.delete(path, -1);
                        checker.wipeDeleted(path);
                    } catch (KeeperException.NoNodeException | KeeperException.NotEmptyException e) {
                        count("wipe: " + e.code() + " (left for the next pass)");
                    }
                }
            }
            count("wipe: " + (server.stat(NS) == null ? "namespace gone" : "namespace left with znodes created meanwhile"));
            if (sched.random.nextBoolean()) {
                pause(leaseTtlMs * 2);
                ScopeProtocol init = new ScopeProtocol(c, NS, clock(0), z -> { }, () -> Acls.of(roles));
                OperatorWrites.GenesisResult g = init.operator().createGenesis(roles);
                trace("oncegate init again: genesis " + g.genesis().id() + (g.created() ? "" : " (kept)"));
                count("wipe: initialised again" + (g.created() ? "" : " (a genesis had survived)"));
            }
        });
    }

    /** The current actor lets virtual time pass (up to {@code maxMillis}). */
    private void pause(long maxMillis) throws InterruptedException {
        Object monitor = new Object();
        synchronized (monitor) {
            sched.await(monitor, 1 + sched.random.nextInt((int) Math.max(1, maxMillis)));
        }
    }

    // ---- the scheduler's loop ---------------------------------------------------------------------

    /** Runs up to {@code steps} steps; {@code chaos}: faults may strike. Returns when nothing can happen any more. */
    private void loop(int steps, boolean chaos) {
        long lastZxid = server.zxid();
        for (int i = 0; i < steps; i++) {
            List<SimScheduler.Actor> runnable = sched.runnable();
            boolean events = !server.pendingEvents().isEmpty();
            if (runnable.isEmpty() && !events) {
                long t = sched.nextTimer();
                if (t == Long.MAX_VALUE) {
                    return; // every actor ended
                }
                sched.advanceTo(t);
                continue;
            }
            step++;
            int roll = sched.random.nextInt(100);
            if (chaos && faultsOn && roll < 2) {
                strike();
            } else if (events && (runnable.isEmpty() || roll < 40)) {
                SimZooKeeper.SimEvent event = server.pollEvent();
                trace("event " + event.description());
                event.action().run();
                SimScheduler.Actor owner = owners.get(event.client());
                if (owner != null) {
                    sched.wake(owner);
                }
            } else {
                SimScheduler.Actor a = runnable.get(sched.random.nextInt(runnable.size()));
                trace(new Pending(a, a.pending));
                sched.advanceTo(sched.now() + sched.random.nextInt(20));
                sched.resume(a);
            }
            if (server.zxid() != lastZxid) {
                lastZxid = server.zxid();
                checker.afterWrite();
            }
            checker.afterStep();
            if (!checker.violations().isEmpty()) {
                throw new SimChecker.Violation(checker.violations().get(0)); // a violation on an actor's thread
            }
        }
    }

    /** A fault: a session expires, a connection drops and comes back, or an actor crashes. */
    private void strike() {
        List<SimScheduler.Actor> alive = new ArrayList<>();
        for (SimScheduler.Actor a : sched.actors()) {
            if (a.alive() && !a.name.equals("rogue")) {
                alive.add(a);
            }
        }
        List<SimClient> live = new ArrayList<>();
        for (SimClient c : clients) {
            if (owners.containsKey(c) && owners.get(c).alive()) {
                live.add(c);
            }
        }
        int what = sched.random.nextInt(3);
        if (what == 0 && !live.isEmpty()) {
            SimClient c = live.get(sched.random.nextInt(live.size()));
            trace("fault: session of " + c.name() + " expires");
            count("fault: session expired");
            c.expire();
            SimScheduler.Actor owner = owners.get(c);
            c.reconnect();
            sched.wake(owner);
        } else if (what == 1 && !live.isEmpty()) {
            SimClient c = live.get(sched.random.nextInt(live.size()));
            trace("fault: connection of " + c.name() + " drops and comes back");
            count("fault: disconnected");
            c.disconnect();
            c.reconnect();
            sched.wake(owners.get(c));
        } else if (!alive.isEmpty()) {
            SimScheduler.Actor a = alive.get(sched.random.nextInt(alive.size()));
            trace("fault: " + a + " crashes at: " + a.pending);
            count("fault: crash" + (a.pending.startsWith("wait") ? " while waiting" : " before a call"));
            sched.crash(a);
            checker.crashed(a);
            for (SimClient c : clients) {
                if (owners.get(c) == a) {
                    c.expire(); // its process is gone: the session lapses
                }
            }
        }
    }

    /**
     * The faults stop: the actors still running finish, and then a fresh contender enters each key,
     * which must be decided (liveness).
     */
    private void quiesce() throws Exception {
        faultsOn = false;
        trace("faults stop");
        loop(20_000, false);
        for (SimScheduler.Actor a : sched.actors()) {
            if (a.alive()) {
                checker.violation("liveness: " + a + " is still running after the faults stopped (at: " + a.pending + ")");
            }
        }
        for (EffectKey key : keys) {
            SimScheduler.Actor[] self = new SimScheduler.Actor[1];
            self[0] = sched.spawn("late-" + key.key().substring(0, 6), () -> {
                SimClient c = client(self[0].name, WORKER, false);
                owners.put(c, self[0]);
                DefaultGate gate = new DefaultGate(c, NS, meters, clock(0), Duration.ofMillis(leaseTtlMs),
                        Duration.ofSeconds(5), self[0].name, "sim-host", 1, false, ZxidMarks.inMemory());
                try (Attempt attempt = gate.enter(key, Duration.ofMillis(leaseTtlMs * 3))) {
                    checker.late(self[0], key, attempt.decision());
                    if (attempt.decision() instanceof Decision.Proceed) {
                        attempt.cross(context -> {
                            checker.crossing(self[0], context).result = "sent_verified";
                            return ActionResult.verified("late");
                        });
                    }
                }
            });
            skews.put(self[0], 0L);
        }
        loop(20_000, false);
        for (SimScheduler.Actor a : sched.actors()) {
            if (a.alive()) {
                checker.violation("liveness: " + a + " is still running after the faults stopped (at: " + a.pending + ")");
            }
        }
        checker.afterWrite();
    }

    // ---- helpers ----------------------------------------------------------------------------------

    private record Pending(SimScheduler.Actor actor, String what) {
        @Override
        public String toString() {
            return actor + ": " + what;
        }
    }

    /** One line of the history, formatted only when it is printed (most histories are never read). */
    private record Line(int step, long at, Object what) {
        @Override
        public String toString() {
            return String.format("%5d %8d ms  %s", step, at - EPOCH, what);
        }
    }

    void trace(Object line) {
        trace.add(new Line(step, sched.now(), line));
    }

    /** Rules with their numbers made N, memoised: counting is on every step's path. */
    private static final Map<String, String> RULE_NAMES = new java.util.concurrent.ConcurrentHashMap<>();

    void count(String rule) {
        rules.merge(RULE_NAMES.computeIfAbsent(rule, r -> r.replaceAll("\\d+", "N")), 1, Integer::sum);
    }

    long leaseTtlMs() {
        return leaseTtlMs;
    }

    int step() {
        return step;
    }

    static String describe(Decision d) {
        return d instanceof Decision.Proceed ? "proceed" : ((Decision.Stop) d).reason().toString().toLowerCase();
    }

    static String describe(Throwable t) {
        StringBuilder b = new StringBuilder(t.toString());
        StackTraceElement[] st = t.getStackTrace();
        for (int i = 0; i < Math.min(6, st.length); i++) {
            b.append(" at ").append(st[i]);
        }
        return b.toString();
    }

    static TreeSet<Integer> none() {
        return new TreeSet<>();
    }
}
