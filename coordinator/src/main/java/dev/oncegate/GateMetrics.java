package dev.oncegate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.apache.curator.framework.state.ConnectionState;

/**
 * The gate's meters (SPEC §8; the README's metrics table lists exactly these, and
 * {@code MeterTableTest} holds the two to each other against a real scrape).
 *
 * <p><b>Everything up front.</b> Like Micrometer's {@code CaffeineStatsCounter}, every counter and
 * timer is registered once, when the gate is built, for every value of its bounded tags, at zero:
 * a dashboard sees each series before its first event, so {@code increase()} does not miss that
 * event. Tag values come from enums ({@link StopReason}, {@link Outcome}, {@link ConnectionState})
 * or from the closed lists below; a {@link StopReason} added later is registered automatically,
 * and {@link #kindOf} (an exhaustive switch) does not compile until it names the reason's
 * decision kind. No key, destination or task id is ever a tag value.
 *
 * <p><b>Tag names</b> survive a Kubernetes scrape: none is {@code namespace}, {@code job},
 * {@code instance}, {@code pod}, {@code service} or {@code container} (Prometheus would rename it
 * {@code exported_…}); the ZooKeeper namespace is {@value #NAMESPACE_TAG}.
 *
 * <p><b>Timers</b> publish count, sum and max only. Percentile histograms are the registry
 * owner's choice, made with a {@code MeterFilter} (see the README); a library never hard-codes them.
 *
 * <p><b>Several gates on one registry.</b> Counters and timers are shared by meter id, so they
 * add up across gates by themselves. A gauge cannot: Micrometer keeps the first state object
 * registered under an id. So each gate reports its own two gauges under a {@value #GATE_TAG} tag
 * whose value is a <em>slot</em>: the lowest number not used by another open gate of the same
 * namespace on that registry, found through the registry's own meter lookup and given back (its
 * gauges removed) when the gate closes. The tag is therefore bounded by the number of gates open
 * at once, not by how many were ever built, and carries no identity; dashboards {@code sum} over
 * it. No static state: the registry is the only place gates meet, and slots are taken under its
 * monitor (only {@code GateMetrics} instances contend for it).
 *
 * <p><b>No registry, no meters.</b> A gate built without a registry gets its metrics with a null registry:
 * nothing is registered or counted (nobody could read it), which spares a short-lived CLI such as
 * {@code oncegate run} the registration of every series; the tag values are still checked.
 *
 * <p>Thread-safe: meters are, the executor count is atomic, and the connection state is guarded
 * by {@code this} (the live connection check runs outside it).
 */
final class GateMetrics {

    static final String DECISIONS = "oncegate.decisions";
    static final String OUTCOMES = "oncegate.outcomes";
    static final String FENCED = "oncegate.fenced.writes";
    static final String TAKEOVERS = "oncegate.lease.takeovers";
    static final String ELECTION_WAIT = "oncegate.election.wait";
    static final String BOUNDARY = "oncegate.boundary.duration";
    static final String ACTIVE = "oncegate.executors.active";
    static final String CONNECTION = "oncegate.zookeeper.connection";

    /** The ZooKeeper namespace's tag; not {@code namespace}, which a Kubernetes scrape renames. */
    static final String NAMESPACE_TAG = "zk_namespace";
    /** The per-gate gauges' slot tag (see the class comment). */
    static final String GATE_TAG = "gate";
    /** The {@code reason} of a {@code proceed} decision. */
    static final String NO_REASON = "none";

    static final List<String> DECISION_KINDS = List.of("proceed", "stop_sent", "stop_unknown", "stop_busy",
            "stop_unavailable");
    /** The executor writes a fencing token can refuse. */
    static final List<String> FENCED_OPERATIONS = List.of("checkpoint", "arm", "release", "outcome");
    /** Why a lease was taken over: lapsed TTL, holder gone, leader that did not act, lease never renewed. */
    static final List<String> TAKEOVER_CAUSES = List.of("lapsed", "abandoned", "stalled_election", "unrenewed");

    /** The connection states counted; {@code RECONNECTED} counts as {@code connected}. */
    private static final List<ConnectionState> STATES = List.of(ConnectionState.CONNECTED,
            ConnectionState.SUSPENDED, ConnectionState.LOST, ConnectionState.READ_ONLY);

    /**
     * The decision kind each stop reason belongs to. Exhaustive on purpose: a new
     * {@link StopReason} does not compile until it is placed here.
     */
    static String kindOf(StopReason reason) {
        return switch (reason) {
            case SENT_VERIFIED -> "stop_sent";
            case SEND_STATUS_UNKNOWN, ARMED_WITHOUT_OUTCOME -> "stop_unknown";
            case EXECUTOR_ACTIVE, WAIT_EXPIRED, FENCED -> "stop_busy";
            case ZOOKEEPER_UNREACHABLE, CONNECTION_LOST, UNREADABLE_RECORD, PERMISSION_DENIED,
                    NAMESPACE_NOT_INITIALISED, NAMESPACE_REPLACED, ZOOKEEPER_ROLLED_BACK, MARKS_UNREADABLE,
                    WRITE_RESULT_UNKNOWN, INTERRUPTED, ZOOKEEPER_ERROR -> "stop_unavailable";
        };
    }

    /** Every (kind, reason) pair a decision can carry, in a stable order: proceed first. */
    static Map<String, List<String>> decisionPairs() {
        Map<String, List<String>> pairs = new LinkedHashMap<>();
        for (String kind : DECISION_KINDS) {
            pairs.put(kind, new ArrayList<>());
        }
        pairs.get("proceed").add(NO_REASON);
        for (StopReason reason : StopReason.values()) {
            pairs.get(kindOf(reason)).add(reason.wireName());
        }
        return pairs;
    }

    static String stateName(ConnectionState state) {
        return state.name().toLowerCase();
    }

    /** Null when the gate was built without a registry: then nothing is registered or counted. */
    private final MeterRegistry registry;
    private final Tags tags;
    private final Map<String, Map<String, Counter>> decisions = new LinkedHashMap<>();
    private final Map<String, Timer> electionWait = new LinkedHashMap<>();
    private final Map<Outcome, Counter> recordedOutcomes = new EnumMap<>(Outcome.class);
    private final Map<Outcome, Counter> unrecordedOutcomes = new EnumMap<>(Outcome.class);
    private final Map<Outcome, Timer> boundary = new EnumMap<>(Outcome.class);
    private final Map<String, Counter> fenced = new LinkedHashMap<>();
    private final Map<String, Counter> takeovers = new LinkedHashMap<>();

    private final AtomicInteger active = new AtomicInteger();
    private final List<Meter> gauges = new ArrayList<>();
    private final BooleanSupplier connectedNow;
    private ConnectionState connection; // guarded by this; null until the first event
    private boolean closed; // guarded by this

    /** {@link #GateMetrics(MeterRegistry, String, BooleanSupplier)} with a fixed first state. */
    GateMetrics(MeterRegistry registry, String namespace, boolean connected) {
        this(registry, namespace, () -> connected);
    }

    /**
     * Registers every meter of a gate on {@code registry}, at zero, and this gate's gauges under
     * a free slot.
     *
     * @param registry  the caller's registry (the gate never closes it), or null for no meters
     * @param namespace the gate's ZooKeeper namespace, the {@value #NAMESPACE_TAG} tag
     * @param connected whether the client is connected, read live by the connection gauge until
     *                  the first {@link #connectionState} event: a client that connects while the
     *                  gate is being built fires its CONNECTED event before the gate listens
     */
    GateMetrics(MeterRegistry registry, String namespace, BooleanSupplier connected) {
        this.registry = registry;
        Objects.requireNonNull(namespace, "namespace");
        this.connectedNow = Objects.requireNonNull(connected, "connected");
        if (registry == null) {
            this.tags = null;
            return;
        }
        this.tags = Tags.of(NAMESPACE_TAG, namespace);
        decisionPairs().forEach((kind, reasons) -> {
            Map<String, Counter> byReason = new LinkedHashMap<>();
            for (String reason : reasons) {
                byReason.put(reason, decisionCounter(kind, reason));
            }
            decisions.put(kind, byReason);
            electionWait.put(kind, Timer.builder(ELECTION_WAIT)
                    .description("Time from entering a key to its decision, by the decision's kind")
                    .tags(tags).tag("kind", kind).register(registry));
        });
        for (Outcome outcome : Outcome.values()) {
            recordedOutcomes.put(outcome, outcomeCounter(outcome, true));
            unrecordedOutcomes.put(outcome, outcomeCounter(outcome, false));
            boundary.put(outcome, Timer.builder(BOUNDARY)
                    .description("Duration of the boundary action, by the outcome it led to")
                    .tags(tags).tag("outcome", outcome.wireName()).register(registry));
        }
        for (String operation : FENCED_OPERATIONS) {
            fenced.put(operation, Counter.builder(FENCED)
                    .description("Executor writes refused because the fencing token no longer matched")
                    .tags(tags).tag("operation", operation).register(registry));
        }
        for (String cause : TAKEOVER_CAUSES) {
            takeovers.put(cause, Counter.builder(TAKEOVERS)
                    .description("Leases taken over from another holder, by cause")
                    .tags(tags).tag("cause", cause).register(registry));
        }
        registerGauges();
    }

    private Counter decisionCounter(String kind, String reason) {
        return Counter.builder(DECISIONS)
                .description("Decisions reached by contenders on entry, and stops of executors at checkpoints or arming")
                .tags(tags).tag("kind", kind).tag("reason", reason).register(registry);
    }

    private Counter outcomeCounter(Outcome outcome, boolean recorded) {
        return Counter.builder(OUTCOMES)
                .description("Boundary crossings by outcome; recorded=false when the outcome znode could not be written")
                .tags(tags).tag("outcome", outcome.wireName()).tag("recorded", Boolean.toString(recorded))
                .register(registry);
    }

    /** Takes the lowest free slot of this namespace on the registry and registers this gate's gauges there. */
    private void registerGauges() {
        synchronized (registry) {
            int slot = 0;
            while (registry.find(ACTIVE).tags(tags).tag(GATE_TAG, Integer.toString(slot)).meter() != null) {
                slot++;
            }
            Tags gate = tags.and(GATE_TAG, Integer.toString(slot));
            gauges.add(Gauge.builder(ACTIVE, active, AtomicInteger::get)
                    .description("Executors of this gate holding a lease or crossing the boundary")
                    .tags(gate).register(registry));
            for (ConnectionState state : STATES) {
                gauges.add(Gauge.builder(CONNECTION, this, m -> m.inState(state))
                        .description("1 for the state this gate's ZooKeeper connection is in, 0 for the others")
                        .tags(gate).tag("state", stateName(state)).register(registry));
            }
        }
    }

    private double inState(ConnectionState state) {
        ConnectionState current;
        synchronized (this) {
            current = connection;
        }
        if (current == null) {
            current = connectedNow.getAsBoolean() ? ConnectionState.CONNECTED : ConnectionState.SUSPENDED;
        }
        return current == state ? 1 : 0;
    }

    void connectionState(ConnectionState state) {
        ConnectionState counted = state == ConnectionState.RECONNECTED ? ConnectionState.CONNECTED : state;
        synchronized (this) {
            if (!closed) {
                connection = counted;
            }
        }
    }

    /** The gate closed: its gauges go, and its slot is free for the next gate. Idempotent. */
    void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (registry == null) {
            return;
        }
        synchronized (registry) {
            for (Meter gauge : gauges) {
                registry.remove(gauge);
            }
            gauges.clear();
        }
    }

    /**
     * Counts a decision; {@code waited} is the election wait on entry, null for a later stop
     * (those are not elections).
     */
    void decision(Decision decision, Duration waited) {
        String reason = decision instanceof Decision.Stop stop ? stop.reason().wireName() : NO_REASON;
        assert !(decision instanceof Decision.Stop stop) || kindOf(stop.reason()).equals(decision.kind())
                : decision.kind() + " carries " + reason + ", which belongs to " + kindOf(((Decision.Stop) decision).reason());
        if (registry == null) {
            return;
        }
        Counter counter = decisions.get(decision.kind()).get(reason);
        if (counter == null) { // a pair kindOf does not know: still bounded, so count it rather than lose it
            counter = decisionCounter(decision.kind(), reason);
        }
        counter.increment();
        if (waited != null) {
            electionWait.get(decision.kind()).record(waited);
        }
    }

    void outcome(Outcome outcome, boolean recorded, Duration boundaryDuration) {
        Objects.requireNonNull(outcome, "outcome");
        if (registry == null) {
            return;
        }
        (recorded ? recordedOutcomes : unrecordedOutcomes).get(outcome).increment();
        if (boundaryDuration != null) {
            boundary.get(outcome).record(boundaryDuration);
        }
    }

    /**
     * Counts a write refused for a stale token.
     *
     * @throws IllegalArgumentException for an operation not in {@link #FENCED_OPERATIONS}
     */
    void fenced(String operation) {
        count(fenced, FENCED_OPERATIONS, operation, "operation");
    }

    /**
     * Counts a lease takeover.
     *
     * @throws IllegalArgumentException for a cause not in {@link #TAKEOVER_CAUSES}
     */
    void takeover(String cause) {
        count(takeovers, TAKEOVER_CAUSES, cause, "cause");
    }

    private void count(Map<String, Counter> counters, List<String> known, String value, String field) {
        if (!known.contains(value)) {
            throw new IllegalArgumentException(field + ": '" + value + "' is not one of " + known
                    + "; add it to GateMetrics and to the README's metrics table");
        }
        if (registry != null) {
            counters.get(value).increment();
        }
    }

    void executorStarted() {
        active.incrementAndGet();
    }

    void executorEnded() {
        active.decrementAndGet();
    }
}
