package dev.oncegate;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

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

    private final MeterRegistry registry;
    private final String namespace;
    private final AtomicInteger active = new AtomicInteger();
    private final AtomicReference<ConnectionState> connection = new AtomicReference<>();

    GateMetrics(MeterRegistry registry, String namespace, boolean connected) {
        this.registry = registry;
        this.namespace = namespace;
        this.connection.set(connected ? ConnectionState.CONNECTED : ConnectionState.SUSPENDED);
        Gauge.builder(ACTIVE, active, AtomicInteger::get)
                .description("Executors of this gate holding a lease or crossing a boundary")
                .tag("namespace", namespace).register(registry);
        for (ConnectionState state : new ConnectionState[] {ConnectionState.CONNECTED, ConnectionState.SUSPENDED,
                ConnectionState.LOST, ConnectionState.READ_ONLY}) {
            Gauge.builder(CONNECTION, connection, c -> c.get() == state || (state == ConnectionState.CONNECTED
                            && c.get() == ConnectionState.RECONNECTED) ? 1 : 0)
                    .description("1 for the ZooKeeper connection's current state, 0 for the others")
                    .tag("namespace", namespace).tag("state", state.name().toLowerCase())
                    .register(registry);
        }
    }

    void connectionState(ConnectionState state) {
        connection.set(state);
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
        active.incrementAndGet();
    }

    void executorEnded() {
        active.decrementAndGet();
    }
}
