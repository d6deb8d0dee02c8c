package dev.oncegate.cli;

import java.time.Clock;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

import dev.oncegate.ScopeState;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The gauges of {@code oncegate exporter}, exactly those declared in
 * {@code deploy/exporter-metrics.txt} (names, tags and help; {@code DeployMetricsTest} holds the
 * two together against a real scrape). Each reads the last complete {@link Backlog} when scraped:
 * a failed scan leaves them at the last values and the scan timestamp going stale, which is what
 * the {@code OncegateExporterScanStale} alert watches. Before the first complete scan the backlog
 * is unknown: its gauges are NaN (no alert fires on NaN, no panel shows a false zero), and the
 * scan timestamp is 0, so that an exporter that never completes a scan reads as stale. The
 * oldest armed scope's age is computed at scrape time from when it was armed.
 *
 * <p>Tags: {@value #NAMESPACE_TAG} (the gate's tag name, which a Kubernetes scrape leaves alone)
 * and, for keys, {@code state}; never a key or a destination.
 *
 * <p>Thread-safe: gauges read one volatile reference through the supplier.
 */
final class BacklogMeters implements MeterBinder {

    static final String NAMESPACE_TAG = "zk_namespace";
    static final String KEYS = "oncegate.exporter.keys";
    static final String ARMED_OLDEST_AGE = "oncegate.exporter.armed.oldest.age";
    static final String AUTHORIZATIONS_UNUSED = "oncegate.exporter.authorizations.unused";
    static final String UNREADABLE_RECORDS = "oncegate.exporter.unreadable.records";
    static final String LAST_SCAN_SUCCESS = "oncegate.exporter.last.scan.success.timestamp";
    static final String SCAN_DURATION = "oncegate.exporter.scan.duration";

    private final String namespace;
    private final Supplier<Backlog> last;
    private final Clock clock;

    /**
     * @param namespace the ZooKeeper namespace scanned
     * @param last      the last complete scan, or null before the first
     * @param clock     the clock the armed age is measured by
     */
    BacklogMeters(String namespace, Supplier<Backlog> last, Clock clock) {
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.last = Objects.requireNonNull(last, "last");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Tags tags = Tags.of(NAMESPACE_TAG, namespace);
        for (ScopeState state : ScopeState.values()) {
            gauge(registry, KEYS, null, tags.and("state", state.wireName()),
                    "Keys by the state of their latest scope at the last complete scan: open, leased, armed (no outcome"
                            + " yet), sent_verified, send_status_unknown, not_sent; a key with an unreadable record has no"
                            + " state and counts in oncegate_exporter_unreadable_records",
                    b -> b.keys().get(state));
        }
        gauge(registry, ARMED_OLDEST_AGE, "seconds", tags,
                "Age of the oldest scope armed without an outcome at the last complete scan, by the time of the scrape;"
                        + " 0 when there is none",
                b -> b.armedOldestAgeSeconds(clock.instant()));
        gauge(registry, AUTHORIZATIONS_UNUSED, null, tags,
                "Redelivery authorizations not yet used to open a scope (each opens one when its key is next entered)",
                Backlog::unusedAuthorizations);
        gauge(registry, UNREADABLE_RECORDS, null, tags,
                "Records the last complete scan could not read or that contradict the protocol, as oncegate inspect"
                        + " reports them (workers fail closed on a record of a key's latest scope they cannot read)",
                Backlog::unreadableRecords);
        Gauge.builder(LAST_SCAN_SUCCESS, this, m -> {
                    Backlog b = m.last.get();
                    return b == null ? 0 : b.ended().toEpochMilli() / 1000.0;
                })
                .description("Unix time at which the last complete scan of the namespace ended; 0 before the first")
                .baseUnit("seconds").tags(tags).strongReference(true).register(registry);
        gauge(registry, SCAN_DURATION, "seconds", tags, "How long the last complete scan took",
                b -> b.took().toNanos() / 1e9);
    }

    private void gauge(MeterRegistry registry, String name, String unit, Tags tags, String help,
                       ToDoubleFunction<Backlog> value) {
        Gauge.builder(name, this, m -> {
                    Backlog b = m.last.get();
                    return b == null ? Double.NaN : value.applyAsDouble(b);
                })
                .description(help).baseUnit(unit).tags(tags).strongReference(true).register(registry);
    }
}
