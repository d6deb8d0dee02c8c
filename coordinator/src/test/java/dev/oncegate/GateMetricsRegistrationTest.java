package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.Test;

/** The meters' shape, without ZooKeeper: registered up front, bounded tags, per-gate gauge slots. */
class GateMetricsRegistrationTest {

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private double gauge(String name, String... tags) {
        return registry.find(name).tags(tags).gauges().stream().mapToDouble(Gauge::value).sum();
    }

    @Test
    void newGate_registersEveryCounterAndTimerAtZero_beforeAnyEvent() {
        // When a gate's metrics are built
        new GateMetrics(registry, "/ns", true);

        // Then every decision pair, outcome, fenced operation and takeover cause is there at zero
        int stopReasons = StopReason.values().length;
        assertThat(registry.find(GateMetrics.DECISIONS).counters()).hasSize(1 + stopReasons)
                .allSatisfy(c -> assertThat(c.count()).isZero());
        assertThat(registry.find(GateMetrics.OUTCOMES).counters()).hasSize(Outcome.values().length * 2);
        assertThat(registry.find(GateMetrics.FENCED).counters()).extracting(c -> c.getId().getTag("operation"))
                .containsExactlyInAnyOrder("checkpoint", "arm", "release", "outcome");
        assertThat(registry.find(GateMetrics.TAKEOVERS).counters()).extracting(c -> c.getId().getTag("cause"))
                .containsExactlyInAnyOrder("lapsed", "abandoned", "stalled_election", "unrenewed");
        assertThat(registry.find(GateMetrics.ELECTION_WAIT).timers()).extracting(t -> t.getId().getTag("kind"))
                .containsExactlyInAnyOrder("proceed", "stop_sent", "stop_unknown", "stop_busy", "stop_unavailable");
        assertThat(registry.find(GateMetrics.BOUNDARY).timers()).hasSize(Outcome.values().length);
        assertThat(registry.find("oncegate.fail.closed").meters()).isEmpty();
        // and each stop reason sits under exactly the kind its javadoc names
        assertThat(registry.find(GateMetrics.DECISIONS).tags("kind", "stop_busy", "reason", "fenced").counter()).isNotNull();
        assertThat(registry.find(GateMetrics.DECISIONS).tags("kind", "stop_unavailable", "reason", "fenced").counter()).isNull();
    }

    @Test
    void everyMeter_usesOnlyTagNamesAKubernetesScrapeKeeps_andNoHistogram() {
        new GateMetrics(registry, "/ns", true);
        Set<String> tagKeys = registry.getMeters().stream().flatMap(m -> m.getId().getTags().stream())
                .map(Tag::getKey).collect(Collectors.toSet());
        assertThat(tagKeys).doesNotContain("namespace", "job", "instance", "pod", "service", "container")
                .contains("zk_namespace");
        for (Timer timer : registry.find(GateMetrics.ELECTION_WAIT).timers()) {
            assertThat(timer.takeSnapshot().percentileValues()).isEmpty();
            assertThat(timer.takeSnapshot().histogramCounts()).isEmpty();
        }
    }

    @Test
    void percentileHistograms_turnOnTheGatesTimersHistograms_andNothingElse() {
        // (MeterTableTest sees the resulting _bucket series in a Prometheus scrape.)
        MeterFilter filter = OncegateMeters.percentileHistograms();
        DistributionStatisticConfig wait = filter.configure(
                new Meter.Id(GateMetrics.ELECTION_WAIT, Tags.of("kind", "proceed"), null, null, Meter.Type.TIMER),
                DistributionStatisticConfig.DEFAULT);
        assertThat(wait.isPercentileHistogram()).isTrue();
        assertThat(wait.getMinimumExpectedValueAsDouble()).isEqualTo(Duration.ofMillis(1).toNanos());
        assertThat(wait.getMaximumExpectedValueAsDouble()).isEqualTo(Duration.ofMinutes(5).toNanos());
        for (Meter.Id other : List.of(new Meter.Id("http.server.requests", Tags.empty(), null, null, Meter.Type.TIMER),
                new Meter.Id(GateMetrics.DECISIONS, Tags.empty(), null, null, Meter.Type.COUNTER))) {
            assertThat(filter.configure(other, DistributionStatisticConfig.DEFAULT)).isSameAs(DistributionStatisticConfig.DEFAULT);
        }
    }

    @Test
    void withoutARegistry_eventsCountNowhere_butTagValuesAreStillChecked() {
        // Given: the metrics of a gate built without a registry
        GateMetrics metrics = new GateMetrics(null, "/ns", true);
        Evidence evidence = Evidence.of("/ns/keys/ab/cd/k", 0, "test");

        // When: every kind of event happens, and the gate closes twice
        metrics.decision(new Decision.StopBusy(StopReason.FENCED, evidence), Duration.ofMillis(5));
        metrics.outcome(Outcome.SENT_VERIFIED, true, Duration.ofMillis(20));
        metrics.fenced("arm");
        metrics.takeover("lapsed");
        metrics.executorStarted();
        metrics.connectionState(ConnectionState.LOST);
        metrics.close();
        metrics.close();

        // Then: a tag value outside its closed list is refused all the same, and nothing reached any registry
        assertThatThrownBy(() -> metrics.fenced("rename")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("operation: 'rename'");
        assertThatThrownBy(() -> metrics.takeover("whim")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cause: 'whim'");
        assertThat(registry.getMeters()).isEmpty();
    }

    @Test
    void events_countUnderTheirTags() {
        GateMetrics metrics = new GateMetrics(registry, "/ns", true);
        Evidence evidence = Evidence.of("/ns/keys/ab/cd/k", 0, "test");

        metrics.decision(new Decision.StopBusy(StopReason.FENCED, evidence), null);
        metrics.decision(new Decision.StopUnavailable(StopReason.CONNECTION_LOST, evidence), Duration.ofMillis(5));
        metrics.outcome(Outcome.SEND_STATUS_UNKNOWN, false, Duration.ofMillis(20));
        metrics.fenced("outcome");
        metrics.takeover("unrenewed");

        assertThat(count(GateMetrics.DECISIONS, "kind", "stop_busy", "reason", "fenced")).isEqualTo(1);
        assertThat(count(GateMetrics.DECISIONS, "kind", "stop_unavailable")).isEqualTo(1);
        assertThat(registry.get(GateMetrics.ELECTION_WAIT).tag("kind", "stop_unavailable").timer().count()).isEqualTo(1);
        assertThat(registry.get(GateMetrics.ELECTION_WAIT).tag("kind", "stop_busy").timer().count()).isZero();
        assertThat(count(GateMetrics.OUTCOMES, "outcome", "send_status_unknown", "recorded", "false")).isEqualTo(1);
        assertThat(registry.get(GateMetrics.BOUNDARY).tag("outcome", "send_status_unknown").timer()
                .totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(20);
        assertThat(count(GateMetrics.FENCED, "operation", "outcome")).isEqualTo(1);
        assertThat(count(GateMetrics.TAKEOVERS, "cause", "unrenewed")).isEqualTo(1);
    }

    @Test
    void unknownFencedOperationOrTakeoverCause_isRefusedLoudly() {
        GateMetrics metrics = new GateMetrics(registry, "/ns", true);
        assertThatThrownBy(() -> metrics.fenced("renew")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("operation").hasMessageContaining("renew");
        assertThatThrownBy(() -> metrics.takeover("expired")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cause").hasMessageContaining("expired");
        assertThat(registry.find(GateMetrics.TAKEOVERS).tag("cause", "expired").meters()).isEmpty();
    }

    @Test
    void takeoverCauses_areExactlyTheOnesTheContentionRulesName() {
        assertThat(GateMetrics.TAKEOVER_CAUSES).containsExactlyInAnyOrder(ContentionRules.LAPSED, ContentionRules.UNRENEWED,
                ContentionRules.ABANDONED, ContentionRules.STALLED_ELECTION);
    }

    @Test
    void twoGatesOneRegistry_eachHasAGaugeSlot_andTheSumsCountBoth() {
        // Given two gates of one namespace on one registry
        GateMetrics first = new GateMetrics(registry, "/ns", true);
        GateMetrics second = new GateMetrics(registry, "/ns", false);

        // When the second has an executor and the first loses its connection
        second.executorStarted();
        first.connectionState(ConnectionState.LOST);

        // Then each reports under its own slot, and the sums count both
        assertThat(gauge(GateMetrics.ACTIVE, "gate", "1")).isEqualTo(1);
        assertThat(gauge(GateMetrics.ACTIVE, "gate", "0")).isZero();
        assertThat(gauge(GateMetrics.ACTIVE)).isEqualTo(1);
        assertThat(gauge(GateMetrics.CONNECTION, "state", "lost")).isEqualTo(1);
        assertThat(gauge(GateMetrics.CONNECTION, "state", "suspended")).isEqualTo(1);
        assertThat(gauge(GateMetrics.CONNECTION, "state", "connected")).isZero();

        // When the second reconnects and the first closes
        second.connectionState(ConnectionState.RECONNECTED);
        first.close();
        first.close();

        // Then only the second's slot is left, and a new gate takes the freed slot 0
        assertThat(registry.find(GateMetrics.ACTIVE).gauges()).extracting(g -> g.getId().getTag("gate")).containsExactly("1");
        assertThat(gauge(GateMetrics.CONNECTION, "state", "connected")).isEqualTo(1);
        assertThat(gauge(GateMetrics.CONNECTION, "state", "lost")).isZero();
        new GateMetrics(registry, "/ns", true);
        assertThat(registry.find(GateMetrics.ACTIVE).gauges()).extracting(g -> g.getId().getTag("gate"))
                .containsExactlyInAnyOrder("0", "1");
        // and counters are shared, not repeated per gate
        assertThat(registry.find(GateMetrics.TAKEOVERS).tag("cause", "lapsed").counters()).hasSize(1);
    }

    @Test
    void anotherNamespace_hasItsOwnSlots() {
        new GateMetrics(registry, "/a", true);
        new GateMetrics(registry, "/b", true);
        assertThat(registry.find(GateMetrics.ACTIVE).gauges()).extracting(g -> g.getId().getTag("zk_namespace") + "#"
                + g.getId().getTag("gate")).containsExactlyInAnyOrder("/a#0", "/b#0");
    }

    @Test
    void compositeRegistry_likeSpringBootsPublishesTheGauges() {
        // Given the common setup: a composite over a real registry
        CompositeMeterRegistry composite = new CompositeMeterRegistry();
        composite.add(registry);
        GateMetrics a = new GateMetrics(composite, "/ns", true);
        GateMetrics b = new GateMetrics(composite, "/ns", true);
        a.executorStarted();
        b.executorStarted();
        assertThat(gauge(GateMetrics.ACTIVE)).isEqualTo(2);
        b.close();
        assertThat(gauge(GateMetrics.ACTIVE)).isEqualTo(1);
        List<Meter> left = registry.find(GateMetrics.ACTIVE).meters().stream().toList();
        assertThat(left).hasSize(1);
    }

    private double count(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
    }
}
