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
 * two together against a real scrape). Two reads feed them, each labelled by its own meters:
 * <ul>
 *   <li>the last complete <b>scan</b> ({@link Backlog#fromIndex}, every interval): the backlog, from
 *       the backlog index, confirmed key by key: {@code keys{state="armed"|"send_status_unknown"}},
 *       the oldest armed age, unused authorizations, unreadable records, and the scan's timestamp and
 *       duration; {@code backlog_indexed} says 1. In a namespace without an index the walk is the
 *       scan (as before the index), and {@code backlog_indexed} says 0;</li>
 *   <li>the last complete <b>walk</b> of every key ({@link Backlog#walk}, every walk interval): the
 *       authoritative per-state counts of the whole keyspace ({@code walk_keys}), which also give
 *       {@code keys} its other states; its timestamp, duration and keys per second; and what it found
 *       of the index ({@code index_missing}, {@code index_stale}).</li>
 * </ul>
 * A failed scan or walk leaves its gauges at the last values and its timestamp going stale, which
 * is what the {@code OncegateExporterScanStale} alert watches for the scan. Before the first complete
 * read the gauges it feeds are NaN (no alert fires on NaN, no panel shows a false zero), and its
 * timestamp is 0, so that an exporter that never completes one reads as stale. The oldest armed
 * scope's age is computed at scrape time from when it was armed.
 *
 * <p>Tags: {@value #NAMESPACE_TAG} (the gate's tag name, which a Kubernetes scrape leaves alone)
 * and, for keys, {@code state}; never a key or a destination.
 *
 * <p>Thread-safe: gauges read volatile references through the suppliers.
 */
final class BacklogMeters implements MeterBinder {

    static final String NAMESPACE_TAG = "zk_namespace";
    static final String KEYS = "oncegate.exporter.keys";
    static final String ARMED_OLDEST_AGE = "oncegate.exporter.armed.oldest.age";
    static final String AUTHORIZATIONS_UNUSED = "oncegate.exporter.authorizations.unused";
    static final String UNREADABLE_RECORDS = "oncegate.exporter.unreadable.records";
    static final String LAST_SCAN_SUCCESS = "oncegate.exporter.last.scan.success.timestamp";
    static final String SCAN_DURATION = "oncegate.exporter.scan.duration";
    static final String BACKLOG_INDEXED = "oncegate.exporter.backlog.indexed";
    static final String WALK_KEYS = "oncegate.exporter.walk.keys";
    static final String WALK_LAST_SUCCESS = "oncegate.exporter.walk.last.success.timestamp";
    static final String WALK_DURATION = "oncegate.exporter.walk.duration";
    static final String WALK_KEYS_PER_SECOND = "oncegate.exporter.walk.keys.per.second";
    static final String INDEX_MISSING = "oncegate.exporter.index.missing";
    static final String INDEX_STALE = "oncegate.exporter.index.stale";

    private final String namespace;
    private final Supplier<Backlog> last;
    private final Supplier<Backlog.Walk> lastWalk;
    private final Clock clock;

    /**
     * @param namespace the ZooKeeper namespace scanned
     * @param last      the last complete scan, or null before the first
     * @param lastWalk  the last complete walk of every key, or null before the first
     * @param clock     the clock the armed age is measured by
     */
    BacklogMeters(String namespace, Supplier<Backlog> last, Supplier<Backlog.Walk> lastWalk, Clock clock) {
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.last = Objects.requireNonNull(last, "last");
        this.lastWalk = Objects.requireNonNull(lastWalk, "lastWalk");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Tags tags = Tags.of(NAMESPACE_TAG, namespace);
        for (ScopeState state : ScopeState.values()) {
            boolean backlogState = state == ScopeState.ARMED || state == ScopeState.SEND_STATUS_UNKNOWN;
            Gauge.builder(KEYS, this, m -> {
                        Backlog scan = m.last.get();
                        if (scan != null && (backlogState || scan.source() == Backlog.Source.WALK)) {
                            return scan.keys().get(state);
                        }
                        Backlog.Walk walk = m.lastWalk.get();
                        return backlogState || walk == null ? Double.NaN : walk.backlog().keys().get(state);
                    })
                    .description("Keys by the state of their latest scope: armed (no outcome yet) and send_status_unknown"
                            + " at the last complete scan (from the backlog index, each key confirmed by its records);"
                            + " open, leased, sent_verified and not_sent at the last complete walk (oncegate_exporter_walk_keys);"
                            + " a key with an unreadable record has no state and counts in oncegate_exporter_unreadable_records")
                    .tags(tags.and("state", state.wireName())).strongReference(true).register(registry);
            walkGauge(registry, WALK_KEYS, null, tags.and("state", state.wireName()),
                    "Keys by the state of their latest scope at the last complete walk of every key: the authoritative"
                            + " count of the whole keyspace, as old as oncegate_exporter_walk_last_success_timestamp_seconds",
                    w -> w.backlog().keys().get(state));
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
        gauge(registry, BACKLOG_INDEXED, null, tags,
                "1 when the last complete scan read the backlog index (its cost follows the backlog); 0 when the"
                        + " namespace has none (initialised by an older release: oncegate init adds it) and the scan is a"
                        + " walk of every key",
                b -> b.source() == Backlog.Source.INDEX ? 1 : 0);
        Gauge.builder(WALK_LAST_SUCCESS, this, m -> {
                    Backlog.Walk w = m.lastWalk.get();
                    return w == null ? 0 : w.backlog().ended().toEpochMilli() / 1000.0;
                })
                .description("Unix time at which the last complete walk of every key ended; 0 before the first")
                .baseUnit("seconds").tags(tags).strongReference(true).register(registry);
        walkGauge(registry, WALK_DURATION, "seconds", tags, "How long the last complete walk of every key took",
                w -> w.backlog().took().toNanos() / 1e9);
        walkGauge(registry, WALK_KEYS_PER_SECOND, null, tags, "Keys read per second by the last complete walk",
                Backlog.Walk::keysPerSecond);
        walkGauge(registry, INDEX_MISSING, null, tags,
                "Backlog index entries the last complete walk found missing (the records call for them): a zkCli"
                        + " authorization, an older release's write, or an entry removed with the worker credential;"
                        + " repaired where the exporter's identity may",
                w -> w.check().missing());
        walkGauge(registry, INDEX_STALE, null, tags,
                "Backlog index entries the last complete walk found stale (the records contradict them, or their key is"
                        + " gone); they show nothing, since every answer is confirmed by the records; repaired where the"
                        + " exporter's identity may",
                w -> w.check().stale());
    }

    private void walkGauge(MeterRegistry registry, String name, String unit, Tags tags, String help,
                           ToDoubleFunction<Backlog.Walk> value) {
        Gauge.builder(name, this, m -> {
                    Backlog.Walk w = m.lastWalk.get();
                    return w == null ? Double.NaN : value.applyAsDouble(w);
                })
                .description(help).baseUnit(unit).tags(tags).strongReference(true).register(registry);
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
