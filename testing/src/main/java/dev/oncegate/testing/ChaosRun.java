package dev.oncegate.testing;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.curator.framework.CuratorFramework;

/**
 * A chaos run: W workers (each its own ZooKeeper session and {@link Gate}) race as C contenders
 * over each of K effects while faults are injected at random; after the faults stop, the
 * survivors must decide every effect. The {@link AtMostOnceChecker}'s verdict over the
 * {@link RecordingProvider}'s ledger and ZooKeeper's records is the result.
 *
 * <p>Every random choice derives from the seed, which the report carries; replaying a seed
 * replays the same schedule of choices (thread timing still varies, which is the point).
 *
 * <p>{@link #run} is thread-safe in that runs share nothing; one run uses its own server(s).
 */
public final class ChaosRun {

    /** The namespace a chaos run works in unless {@link Builder#namespace} names another. */
    public static final String NAMESPACE = "/oncegate-chaos";

    private final Config config;
    private final Consumer<Progress> progress;
    private final RecordingProvider provider = new RecordingProvider();
    private final Map<FaultKind, AtomicInteger> faults = new EnumMap<>(FaultKind.class);
    private final Set<Integer> decided = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean pauseNextExecutor = new AtomicBoolean();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final Map<Role, AtomicInteger> roles = new EnumMap<>(Role.class);

    /**
     * How a contender came to want the effect, which decides when it arrives: siblings created
     * from one request arrive together; a delegated worker a moment later; a task resumed
     * overnight long after its siblings have (probably) finished.
     */
    enum Role {
        SIBLING, DELEGATED, RESUMED;

        static Role of(int contender, int contenders) {
            if (contenders >= 3 && contender == contenders - 1) {
                return RESUMED;
            }
            return contender < Math.max(1, (contenders + 1) / 2) ? SIBLING : DELEGATED;
        }

        long delay(Random random, long arrivalWindow) {
            return switch (this) {
                case SIBLING -> random.nextInt(200);
                case DELEGATED -> 200 + random.nextInt(1300);
                case RESUMED -> Math.max(3000, arrivalWindow / 4) + random.nextInt((int) Math.max(1, arrivalWindow / 4));
            };
        }
    }

    private ChaosRun(Config config, Consumer<Progress> progress) {
        this.config = config;
        this.progress = progress;
        for (FaultKind kind : FaultKind.values()) {
            faults.put(kind, new AtomicInteger());
        }
        for (Role role : Role.values()) {
            roles.put(role, new AtomicInteger());
        }
    }

    /**
     * What to run. Use {@link #builder()}.
     *
     * @param workers        worker sessions (≥ 1)
     * @param effects        distinct effects (≥ 1)
     * @param contenders     contenders per effect (≥ 1)
     * @param duration       how long faults are injected
     * @param faultRate      faults per second while injecting (≥ 0)
     * @param seed           the seed of every random choice
     * @param ensemble       a 3-server ensemble instead of a standalone server
     * @param leaseTtl       the gates' lease TTL
     * @param sessionTimeout the workers' session timeout
     * @param settle         how long after the faults stop survivors get to decide every effect
     * @param registry       where the workers' gates register their meters
     * @param namespace      the namespace the run initialises and works in (on its own server)
     */
    public record Config(int workers, int effects, int contenders, Duration duration, double faultRate, long seed,
                         boolean ensemble, Duration leaseTtl, Duration sessionTimeout, Duration settle,
                         MeterRegistry registry, String namespace) {
        public Config {
            Objects.requireNonNull(namespace, "namespace");
            positive("workers", workers);
            positive("effects", effects);
            positive("contenders", contenders);
            Objects.requireNonNull(duration, "duration");
            Objects.requireNonNull(leaseTtl, "leaseTtl");
            Objects.requireNonNull(sessionTimeout, "sessionTimeout");
            Objects.requireNonNull(settle, "settle");
            Objects.requireNonNull(registry, "registry");
            if (duration.isNegative()) {
                throw new IllegalArgumentException("duration: must not be negative, got " + duration);
            }
            if (!(faultRate >= 0) || Double.isInfinite(faultRate)) {
                throw new IllegalArgumentException("faultRate: must be a finite number ≥ 0, got " + faultRate);
            }
            if (sessionTimeout.toMillis() < 2000 || sessionTimeout.toMillis() > 20000) {
                throw new IllegalArgumentException("sessionTimeout: must be between 2 s and 20 s, got " + sessionTimeout);
            }
        }

        private static void positive(String field, int value) {
            if (value < 1) {
                throw new IllegalArgumentException(field + ": must be at least 1, got " + value);
            }
        }
    }

    /** A {@link Config} builder with defaults sized for a short run on 2 cores. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link Config}; every setter may be called any number of times. Not thread-safe. */
    public static final class Builder {
        private int workers = 6;
        private int effects = 40;
        private int contenders = 4;
        private Duration duration = Duration.ofSeconds(20);
        private double faultRate = 0.5;
        private long seed = new Random().nextLong();
        private boolean ensemble;
        private Duration leaseTtl = Duration.ofSeconds(3);
        private Duration sessionTimeout = Duration.ofSeconds(5);
        private Duration settle = Duration.ofSeconds(60);
        private MeterRegistry registry;
        private String namespace = NAMESPACE;

        public Builder workers(int n) { this.workers = n; return this; }
        public Builder effects(int n) { this.effects = n; return this; }
        public Builder contenders(int n) { this.contenders = n; return this; }
        public Builder duration(Duration d) { this.duration = d; return this; }
        public Builder faultRate(double perSecond) { this.faultRate = perSecond; return this; }
        public Builder seed(long seed) { this.seed = seed; return this; }
        public Builder ensemble(boolean ensemble) { this.ensemble = ensemble; return this; }
        public Builder leaseTtl(Duration d) { this.leaseTtl = d; return this; }
        public Builder sessionTimeout(Duration d) { this.sessionTimeout = d; return this; }
        public Builder settle(Duration d) { this.settle = d; return this; }
        public Builder registry(MeterRegistry r) { this.registry = r; return this; }

        /** The namespace the run initialises and works in, on its own server(s); default {@value ChaosRun#NAMESPACE}. */
        public Builder namespace(String ns) {
            this.namespace = ns;
            return this;
        }

        /** @throws IllegalArgumentException naming the field when a value is impossible */
        public Config build() {
            return new Config(workers, effects, contenders, duration, faultRate, seed, ensemble, leaseTtl, sessionTimeout, settle,
                    registry != null ? registry : new SimpleMeterRegistry(), namespace);
        }
    }

    /**
     * A live progress snapshot, reported about once a second.
     *
     * @param decided    effects some contender saw decided
     * @param effects    all effects
     * @param deliveries deliveries so far
     * @param duplicates deliveries beyond the first per effect
     * @param faults     faults injected so far
     * @param elapsed    time since the run started
     */
    public record Progress(int decided, int effects, int deliveries, int duplicates, int faults, Duration elapsed) {
    }

    /**
     * What a run did.
     *
     * @param seed        replay with this
     * @param config      what was run
     * @param verdict     the checker's verdict (deliveries, duplicates, outcomes, violations)
     * @param faults      faults injected, by kind
     * @param contenders  contenders by role: {@code sibling}, {@code delegated}, {@code resumed}
     * @param fencedWrites executor writes refused for a stale token
     * @param failClosed  stop_unavailable decisions
     * @param takeovers   leases taken over
     * @param elapsed     wall time of the whole run
     */
    public record Report(long seed, Config config, AtMostOnceChecker.Verdict verdict, Map<String, Integer> faults,
                         Map<String, Integer> contenders, long fencedWrites, long failClosed, long takeovers,
                         Duration elapsed) {

        /** Safe (no violation), live (every effect decided), and no duplicate delivery. */
        public boolean ok() {
            return verdict.safe() && verdict.undecided() == 0 && verdict.duplicates() == 0;
        }

        public int totalFaults() {
            return faults.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    /** Runs {@code config}, reporting progress to {@code progress} (may be null). */
    public static Report run(Config config, Consumer<Progress> progress) throws InterruptedException {
        return new ChaosRun(Objects.requireNonNull(config, "config"), progress).execute();
    }

    // ---- the run ------------------------------------------------------------------------------

    private Report execute() throws InterruptedException {
        long started = System.nanoTime();
        MeterRegistry registry = config.registry();
        List<EffectKey> keys = new ArrayList<>();
        for (int i = 0; i < config.effects(); i++) {
            keys.add(EffectKey.of(Destination.stable("chaos", "destination-" + i),
                    ("effect " + i + " of run " + config.seed()).getBytes(StandardCharsets.UTF_8)));
        }
        try (ChaosFixture fixture = config.ensemble() ? ChaosFixture.ensemble() : ChaosFixture.standalone()) {
            fixture.initNamespace(config.namespace());
            List<Worker> workers = new ArrayList<>();
            java.util.concurrent.ScheduledExecutorService pool = Executors.newScheduledThreadPool(
                    Math.min(config.effects() * config.contenders(), Math.max(16, config.workers() * 6)),
                    daemon("chaos-contender"));
            Thread injector = null;
            Thread reporter = null;
            try {
                for (int w = 0; w < config.workers(); w++) {
                    workers.add(new Worker(fixture.connectString(), config, registry, "worker-" + w));
                }
                Random schedule = new Random(config.seed());
                long hardDeadline = System.nanoTime() + config.duration().plus(config.settle()).toNanos();
                List<java.util.concurrent.Future<?>> tasks = new ArrayList<>();
                // Effects arrive over the first 80% of the fault phase, so faults meet work in flight.
                long arrivalWindow = config.duration().toMillis() * 4 / 5;
                for (int e = 0; e < keys.size(); e++) {
                    long effectStart = arrivalWindow == 0 ? 0 : (long) (schedule.nextDouble() * arrivalWindow);
                    for (int c = 0; c < config.contenders(); c++) {
                        int effect = e;
                        Worker worker = workers.get(schedule.nextInt(workers.size()));
                        long taskSeed = schedule.nextLong();
                        Role role = Role.of(c, config.contenders());
                        roles.get(role).incrementAndGet();
                        long start = effectStart + role.delay(schedule, arrivalWindow);
                        tasks.add(pool.schedule(() -> contend(worker, keys.get(effect), effect, taskSeed, hardDeadline),
                                start, TimeUnit.MILLISECONDS));
                    }
                }
                injector = daemon("chaos-injector").newThread(() -> injectFaults(fixture, workers, new Random(config.seed() * 31 + 7)));
                injector.start();
                reporter = daemon("chaos-progress").newThread(() -> report(started));
                reporter.start();
                for (java.util.concurrent.Future<?> task : tasks) {
                    long left = hardDeadline - System.nanoTime();
                    try {
                        task.get(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)) + 5000, TimeUnit.MILLISECONDS);
                    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ignored) {
                        // an undecided or failed contender: the checker reports the effect as undecided
                    }
                }
                stopping.set(true);
                injector.interrupt();
                injector.join(TimeUnit.SECONDS.toMillis(30));
                fixture.ensureUp();
                List<KeyHistory> histories = new ArrayList<>();
                try (CuratorFramework client = EmbeddedZooKeeper.newClient(fixture.connectString(), config.sessionTimeout());
                     Gate reader = Gate.builder(client).namespace(config.namespace()).build()) {
                    for (EffectKey key : keys) {
                        histories.add(reader.inspect(key.key()));
                    }
                }
                AtMostOnceChecker.Verdict verdict = AtMostOnceChecker.check(histories, provider.ledger(), true);
                Map<String, Integer> injected = new LinkedHashMap<>();
                faults.forEach((k, v) -> injected.put(k.wireName(), v.get()));
                Map<String, Integer> byRole = new LinkedHashMap<>();
                roles.forEach((k, v) -> byRole.put(k.name().toLowerCase(), v.get()));
                return new Report(config.seed(), config, verdict, injected, byRole,
                        count(registry.find("oncegate.fenced.writes")),
                        count(registry.find("oncegate.decisions").tag("kind", "stop_unavailable")),
                        count(registry.find("oncegate.lease.takeovers")),
                        Duration.ofNanos(System.nanoTime() - started));
            } finally {
                stopping.set(true);
                if (injector != null) {
                    injector.interrupt();
                    // A restart in progress must finish before the servers are closed under it.
                    joinQuietly(injector, Duration.ofSeconds(30));
                }
                if (reporter != null) {
                    reporter.interrupt();
                }
                pool.shutdownNow();
                pool.awaitTermination(30, TimeUnit.SECONDS);
                for (Worker worker : workers) {
                    worker.close();
                }
            }
        }
    }

    /** One contender: enter until the effect is decided (or the run's hard deadline passes). */
    private void contend(Worker worker, EffectKey key, int effect, long seed, long hardDeadline) {
        ChaosContender.Hooks hooks = new ChaosContender.Hooks() {
            @Override
            public void phase(String phase) {
            }

            @Override
            public boolean pauseNow() {
                return pauseNextExecutor.compareAndSet(true, false);
            }
        };
        try {
            if (ChaosContender.run(worker.gate, key, new Random(seed), hardDeadline, provider, config.leaseTtl(), hooks)) {
                decided.add(effect);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void injectFaults(ChaosFixture fixture, List<Worker> workers, Random random) {
        if (config.faultRate() <= 0) {
            return;
        }
        long end = System.nanoTime() + config.duration().toNanos();
        List<FaultKind> kinds = new ArrayList<>(List.of(FaultKind.values()));
        if (!fixture.isEnsemble()) {
            kinds.remove(FaultKind.LEADER_KILL);
        }
        try {
            while (!stopping.get() && System.nanoTime() < end) {
                long gapMs = (long) (-Math.log(1 - random.nextDouble()) / config.faultRate() * 1000);
                Thread.sleep(Math.min(gapMs, Math.max(0, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))));
                if (System.nanoTime() >= end || stopping.get()) {
                    return;
                }
                FaultKind kind = pick(kinds, random);
                Worker victim = workers.get(random.nextInt(workers.size()));
                try {
                    inject(kind, fixture, victim);
                    faults.get(kind).incrementAndGet();
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    // A fault that could not be injected (a session already gone): not counted.
                }
            }
        } catch (InterruptedException e) {
            // The run is being torn down, or the fault phase ended: the main thread brings the
            // servers back up (ensureUp) only in the latter case, before it reads the records.
            Thread.currentThread().interrupt();
        }
    }

    /** Weighted: cheap faults often, whole-server outages rarely. */
    private static FaultKind pick(List<FaultKind> kinds, Random random) {
        int total = 0;
        for (FaultKind k : kinds) {
            total += weight(k);
        }
        int roll = random.nextInt(total);
        for (FaultKind k : kinds) {
            roll -= weight(k);
            if (roll < 0) {
                return k;
            }
        }
        return kinds.get(0);
    }

    private static int weight(FaultKind kind) {
        return switch (kind) {
            case SESSION_EXPIRY_SERVER, SESSION_EXPIRY_CLIENT, CONNECTION_DROP -> 6;
            case EXECUTOR_PAUSE -> 4;
            case LEADER_KILL -> 3;
            case RESTART_WITHIN_SESSION -> 2;
            case RESTART_BEYOND_SESSION -> 1;
        };
    }

    private void inject(FaultKind kind, ChaosFixture fixture, Worker victim) throws Exception {
        switch (kind) {
            case SESSION_EXPIRY_SERVER -> Faults.expireSession(victim.client, config.sessionTimeout().multipliedBy(2));
            case SESSION_EXPIRY_CLIENT -> Faults.expireSessionClientSide(victim.client);
            case CONNECTION_DROP -> Faults.dropConnection(victim.client);
            case RESTART_WITHIN_SESSION -> fixture.restart(config.sessionTimeout().dividedBy(3));
            case RESTART_BEYOND_SESSION -> fixture.restart(config.sessionTimeout().multipliedBy(3).dividedBy(2));
            case LEADER_KILL -> fixture.killLeader(config.sessionTimeout().dividedBy(2));
            case EXECUTOR_PAUSE -> pauseNextExecutor.set(true);
        }
    }

    private void report(long started) {
        try {
            while (!stopping.get()) {
                Thread.sleep(1000);
                if (progress != null) {
                    List<RecordingProvider.Delivery> ledger = provider.ledger();
                    Set<String> delivered = new HashSet<>();
                    ledger.forEach(d -> delivered.add(d.key()));
                    int injected = faults.values().stream().mapToInt(AtomicInteger::get).sum();
                    progress.accept(new Progress(decided.size(), config.effects(), ledger.size(),
                            ledger.size() - delivered.size(), injected, Duration.ofNanos(System.nanoTime() - started)));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void joinQuietly(Thread thread, Duration limit) {
        try {
            thread.join(limit.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static long count(Search search) {
        return (long) search.counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** One worker: its own session and gate. */
    private static final class Worker implements AutoCloseable {
        final CuratorFramework client;
        final Gate gate;

        Worker(String connectString, Config config, MeterRegistry registry, String taskId) {
            this.client = EmbeddedZooKeeper.newClient(connectString, config.sessionTimeout());
            this.gate = Gate.builder(client).namespace(config.namespace()).taskId(taskId).meterRegistry(registry)
                    .leaseTtl(config.leaseTtl()).connectTimeout(config.sessionTimeout()).build();
        }

        @Override
        public void close() {
            gate.close();
            client.close();
        }
    }
}
