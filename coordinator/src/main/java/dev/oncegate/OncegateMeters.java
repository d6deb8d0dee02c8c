package dev.oncegate;

import java.time.Duration;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;

/**
 * Choices about the gate's meters that belong to the registry's owner, not to the library. A gate
 * registers its meters on the caller's {@code MeterRegistry} (the README's metrics table lists
 * them) and publishes count, sum and max for its timers, nothing more: percentiles computed in
 * one process cannot be aggregated across a fleet, and histograms cost series.
 *
 * <pre>{@code
 * registry.config().meterFilter(OncegateMeters.percentileHistograms()); // before the first gate
 * }</pre>
 *
 * <p>Stateless and thread-safe.
 */
public final class OncegateMeters {

    private OncegateMeters() {
    }

    /**
     * A filter that gives the gate's timers ({@code oncegate.election.wait},
     * {@code oncegate.boundary.duration}) a percentile histogram from 1 ms to 5 minutes, so that
     * Prometheus's {@code histogram_quantile} over {@code _bucket} yields their quantiles, as the
     * Grafana dashboard in {@code deploy/} expects. Add it to the registry before the first gate
     * is built on it; other meters pass through unchanged.
     */
    public static MeterFilter percentileHistograms() {
        return new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                if (id.getType() == Meter.Type.TIMER && id.getName().startsWith("oncegate.")) {
                    return DistributionStatisticConfig.builder()
                            .percentilesHistogram(true)
                            .minimumExpectedValue((double) Duration.ofMillis(1).toNanos())
                            .maximumExpectedValue((double) Duration.ofMinutes(5).toNanos())
                            .build().merge(config);
                }
                return config;
            }
        };
    }
}
