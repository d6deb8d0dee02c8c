package dev.oncegate;

import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.curator.framework.state.ConnectionState;

/**
 * The gate's meters (SPEC §8). Names are lower-case, dot-separated and prefixed
 * {@code oncegate.}; every dimension is a tag with a bounded set of values (enums and the
 * namespace); no key or destination ever becomes a tag. The README's metrics table lists
 * exactly these. Thread-safe: meters are.
 */
final class GateMetrics {

    static final String DECISIONS = "oncegate.decisions";
    static final String OUTCOMES = "oncegate.outcomes";
    static final String FENCED = "oncegate.fenced.writes";
    static final String TAKEOVERS = "oncegate.lease.takeovers";
    static final String FAIL_CLOSED = "oncegate.fail.closed";
    static final String ELECTION_WAIT = "oncegate.election.wait";
    static final String BOUNDARY = "oncegate.boundary.duration";
    static final String ACTIVE = "oncegate.executors.active";
    static final String CONNECTION = "oncegate.zookeeper.connection";

    /**
     * Gauges are per (registry, namespace), shared by every gate of this process that reports
     * there: a fleet process often runs several gates on one registry.
     */
    private static final Map<MeterRegistry, Map<String, Shared>> SHARED = new WeakHashMap<>();

    private static final ConnectionState[] STATES = {ConnectionState.CONNECTED, ConnectionState.SUSPENDED,
            ConnectionState.LOST, ConnectionState.READ_ONLY};

    /** The state behind the gauges: executors, and gates per connection state. */
    private static final class Shared {
        final AtomicInteger active = new AtomicInteger();
        final Map<ConnectionState, AtomicInteger> gates = new EnumMap<>(ConnectionState.class);

        Shared() {
            for (ConnectionState state : STATES) {
                gates.put(state, new AtomicInteger());
            }
        }
    }

    private final MeterRegistry registry;
    private final String namespace;
    private final Shared shared;
    private ConnectionState connection; // guarded by shared

    GateMetrics(MeterRegistry registry, String namespace, boolean connected) {
        this.registry = registry;
        this.namespace = namespace;
        synchronized (SHARED) {
            Map<String, Shared> byNamespace = SHARED.computeIfAbsent(registry, r -> new HashMap<>());
            Shared existing = byNamespace.get(namespace);
            if (existing == null) {
                existing = new Shared();
                byNamespace.put(namespace, existing);
                Gauge.builder(ACTIVE, existing.active, AtomicInteger::get)
                        .description("Executors holding a lease or crossing a boundary, over this process's gates")
                        .tag("namespace", namespace).register(registry);
                for (ConnectionState state : STATES) {
                    Gauge.builder(CONNECTION, existing.gates.get(state), AtomicInteger::get)
                            .description("This process's gates whose ZooKeeper connection is in this state")
                            .tag("namespace", namespace).tag("state", state.name().toLowerCase())
                            .register(registry);
                }
            }
            this.shared = existing;
        }
        synchronized (shared) {
            connection = connected ? ConnectionState.CONNECTED : ConnectionState.SUSPENDED;
            shared.gates.get(connection).incrementAndGet();
        }
    }

    void connectionState(ConnectionState state) {
        ConnectionState counted = state == ConnectionState.RECONNECTED ? ConnectionState.CONNECTED : state;
        synchronized (shared) {
            if (connection == null || connection == counted) {
                return; // closed, or no change
            }
            shared.gates.get(connection).decrementAndGet();
            connection = counted;
            shared.gates.get(connection).incrementAndGet();
        }
    }

    /** The gate closed: it no longer counts in the connection gauge. */
    void close() {
        synchronized (shared) {
            if (connection != null) {
                shared.gates.get(connection).decrementAndGet();
                connection = null;
            }
        }
    }

    void decision(Decision decision, Duration waited) {
        String reason = decision instanceof Decision.Stop stop ? stop.reason().wireName() : "none";
        Counter.builder(DECISIONS).description("Decisions reached by contenders")
                .tag("namespace", namespace).tag("kind", decision.kind()).tag("reason", reason)
                .register(registry).increment();
        if (waited != null) {
            Timer.builder(ELECTION_WAIT).description("Time from entering a key to the decision")
                    .tag("namespace", namespace).tag("kind", decision.kind())
                    .publishPercentiles(0.5, 0.95, 0.99).publishPercentileHistogram()
                    .register(registry).record(waited);
        }
    }

    void failClosed(StopReason reason) {
        Counter.builder(FAIL_CLOSED).description("Stops because the state could not be established")
                .tag("namespace", namespace).tag("reason", reason.wireName())
                .register(registry).increment();
    }

    void outcome(Outcome outcome, boolean recorded, Duration boundary) {
        Counter.builder(OUTCOMES).description("Boundary crossings by outcome")
                .tag("namespace", namespace).tag("outcome", outcome.wireName())
                .tag("recorded", Boolean.toString(recorded))
                .register(registry).increment();
        Timer.builder(BOUNDARY).description("Duration of the boundary action")
                .tag("namespace", namespace).tag("outcome", outcome.wireName())
                .publishPercentiles(0.5, 0.95, 0.99).publishPercentileHistogram()
                .register(registry).record(boundary);
    }

    void fenced(String operation) {
        Counter.builder(FENCED).description("Executor writes refused because the fencing token no longer matched")
                .tag("namespace", namespace).tag("operation", operation)
                .register(registry).increment();
    }

    void takeover(String cause) {
        Counter.builder(TAKEOVERS).description("Leases taken over from another holder")
                .tag("namespace", namespace).tag("cause", cause)
                .register(registry).increment();
    }

    void executorStarted() {
        shared.active.incrementAndGet();
    }

    void executorEnded() {
        shared.active.decrementAndGet();
    }
}
