package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** SPEC §8: the meters count what the scenarios did, by bounded tags, never by key. */
class GateMetricsTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private double count(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
    }

    private double active() {
        return registry.find("oncegate.executors.active").tag("zk_namespace", zk.namespace()).gauges().stream()
                .mapToDouble(Gauge::value).sum();
    }

    private Worker metered(String task) {
        return zk.newWorker(task, b -> b.meterRegistry(registry));
    }

    @Test
    void scenarios_countedByKindOutcomeFencingTakeoverAndFailClosed() throws Exception {
        // Given workers sharing one registry
        Worker a = metered("task-a");
        Worker b = metered("task-b");

        // When: key 1 delivered, then entered again (proceed, sent_verified, stop_sent)
        EffectKey k1 = zk.key();
        try (Attempt x = a.gate().enter(k1)) {
            x.cross(zk.provider().verified());
        }
        try (Attempt x = b.gate().enter(k1)) {
            assertThat(x.decision()).isInstanceOf(Decision.StopSent.class);
        }
        // key 2: not_sent, then delivered unconfirmed in scope 1, then a stop_unknown
        EffectKey k2 = zk.newKey();
        try (Attempt x = a.gate().enter(k2)) {
            x.cross(zk.provider().rejects("refused before upload"));
        }
        try (Attempt x = b.gate().enter(k2)) {
            x.cross(zk.provider().unconfirmed());
        }
        try (Attempt x = a.gate().enter(k2)) {
            assertThat(x.decision()).isInstanceOf(Decision.StopUnknown.class);
        }
        // key 3: a hung executor (2 s lease) is taken over (lapsed) and fenced at its checkpoint
        EffectKey k3 = zk.newKey();
        Worker hung = zk.newWorker("task-hung", builder -> builder.meterRegistry(registry).leaseTtl(Timing.SHORT_LEASE));
        Attempt hungAttempt = zk.track(hung.gate().enter(k3));
        assertThat(hungAttempt.decision().proceeds()).isTrue();
        Future<Attempt> taker = Scenarios.enterAsync(zk.newPool(1), b.gate(), k3, Timing.WAIT);
        Attempt takerAttempt = zk.track(taker.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertThat(takerAttempt.decision().proceeds()).isTrue();
        assertThat(hungAttempt.checkpoint("late").proceeds()).isFalse();
        assertThat(takerAttempt.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        // an uninitialised namespace: fail closed
        Worker lost = zk.track(Worker.start(zk.connectString(), Scenarios.freshNamespace(), "task-lost", Timing.SESSION,
                builder -> builder.meterRegistry(registry)));
        try (Attempt x = lost.gate().enter(zk.newKey())) {
            assertThat(x.decision()).isInstanceOf(Decision.StopUnavailable.class);
        }

        // Then the ledger and the meters agree
        assertThat(zk.provider().deliveries()).isEqualTo(3);
        assertThat(count("oncegate.decisions", "kind", "proceed")).isEqualTo(5);
        assertThat(count("oncegate.decisions", "kind", "stop_sent")).isEqualTo(1);
        assertThat(count("oncegate.decisions", "kind", "stop_unknown")).isEqualTo(1);
        assertThat(count("oncegate.decisions", "kind", "stop_busy", "reason", "fenced")).isEqualTo(1);
        assertThat(count("oncegate.decisions", "kind", "stop_unavailable", "reason", "namespace_not_initialised")).isEqualTo(1);
        assertThat(count("oncegate.outcomes", "outcome", "sent_verified")).isEqualTo(2);
        assertThat(count("oncegate.outcomes", "outcome", "not_sent")).isEqualTo(1);
        assertThat(count("oncegate.outcomes", "outcome", "send_status_unknown")).isEqualTo(1);
        assertThat(count("oncegate.outcomes", "recorded", "false")).isZero();
        assertThat(count("oncegate.fenced.writes", "operation", "checkpoint")).isEqualTo(1);
        assertThat(count("oncegate.fenced.writes")).isEqualTo(1);
        assertThat(count("oncegate.lease.takeovers", "cause", "lapsed")).isEqualTo(1);
        assertThat(count("oncegate.lease.takeovers")).isEqualTo(1);
        assertThat(count("oncegate.decisions", "kind", "stop_unavailable")).isEqualTo(1);
        assertThat(registry.find("oncegate.fail.closed").meters()).isEmpty(); // decisions{kind=stop_unavailable} counts them
        // and no key ever became a tag value
        for (Meter meter : registry.getMeters()) {
            assertThat(meter.getId().getName()).startsWith("oncegate.");
            meter.getId().getTags().forEach(tag -> assertThat(tag.getValue())
                    .doesNotContain(k1.key()).doesNotContain(k2.key()).doesNotContain(k3.key()));
        }
        assertThat(active()).isZero();
    }

    @Test
    void twoGatesOneRegistry_activeGaugeCountsBothGatesExecutors() throws Exception {
        // Given two gates (two clients) in one process sharing a registry and a namespace
        Worker first = metered("task-a");
        Worker second = metered("task-b");
        // When only the second gate's attempt proceeds and holds its lease
        try (Attempt attempt = second.gate().enter(zk.key())) {
            assertThat(attempt.decision().proceeds()).isTrue();
            // Then the active-executors gauges, summed over the gates' slots, show it
            assertThat(active()).isEqualTo(1.0);
            assertThat(registry.find("oncegate.executors.active").tag("zk_namespace", zk.namespace()).gauges()).hasSize(2);
        }
        assertThat(first.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.OPEN);
        assertThat(zk.provider().deliveries()).isZero();
    }
}
