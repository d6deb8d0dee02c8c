package dev.oncegate.deploy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.OncegateMeters;
import dev.oncegate.testing.EmbeddedZooKeeper;
import dev.oncegate.testing.RecordingProvider;
import dev.oncegate.testing.Timing;
import dev.oncegate.testing.Worker;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * A real workload on a real ZooKeeper, scraped in Prometheus text format: two gates of one
 * namespace on one registry set up as the README says (percentile histogram turned on by a
 * MeterFilter), a delivery, a stop on the consumed key, a proven not-sent followed by an
 * unconfirmed delivery, and the stop that follows. The scrape is taken while both gates are open
 * (their gauges are there) and kept for the JVM: several test classes compare against it.
 */
final class GateWorkload {

    static final String NAMESPACE = "/oncegate-metrics";

    private static String scrape;

    private GateWorkload() {
    }

    static synchronized PrometheusText scrape() throws Exception {
        if (scrape == null) {
            scrape = run();
        }
        return PrometheusText.parse(scrape);
    }

    /** A registry set up as the README says: the gate's timers with a percentile histogram. */
    static PrometheusMeterRegistry registry() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config().meterFilter(OncegateMeters.percentileHistograms());
        return registry;
    }

    private static String run() throws Exception {
        PrometheusMeterRegistry registry = registry();
        RecordingProvider provider = new RecordingProvider();
        try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start()) {
            zk.initNamespace(NAMESPACE);
            try (Worker a = Worker.start(zk.connectString(), NAMESPACE, "metrics-a", Timing.SESSION,
                    b -> b.meterRegistry(registry));
                 Worker b = Worker.start(zk.connectString(), NAMESPACE, "metrics-b", Timing.SESSION,
                         g -> g.meterRegistry(registry))) {
                EffectKey delivered = key();
                try (Attempt x = a.gate().enter(delivered, Duration.ZERO)) {
                    check(x.decision() instanceof Decision.Proceed, x.decision());
                    x.cross(provider.verified());
                }
                try (Attempt x = b.gate().enter(delivered, Duration.ZERO)) {
                    check(x.decision() instanceof Decision.StopSent, x.decision());
                }
                EffectKey uncertain = key();
                try (Attempt x = a.gate().enter(uncertain, Duration.ZERO)) {
                    x.cross(provider.rejects("refused before upload"));
                }
                try (Attempt x = b.gate().enter(uncertain, Duration.ZERO)) {
                    x.cross(provider.unconfirmed());
                }
                try (Attempt x = a.gate().enter(uncertain, Duration.ZERO)) {
                    check(x.decision() instanceof Decision.StopUnknown, x.decision());
                }
                check(provider.deliveries() == 2, provider.ledger());
                return registry.scrape();
            }
        } finally {
            registry.close();
        }
    }

    private static EffectKey key() {
        return EffectKey.of(Destination.stable("slack", "C-" + UUID.randomUUID()),
                ("report " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8));
    }

    private static void check(boolean condition, Object what) {
        if (!condition) {
            throw new IllegalStateException("the workload did not go as planned: " + what);
        }
    }
}
