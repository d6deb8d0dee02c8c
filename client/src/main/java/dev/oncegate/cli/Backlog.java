package dev.oncegate.cli;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

import dev.oncegate.Operator;
import dev.oncegate.ScopeState;

/**
 * The durable backlog of a namespace as one complete read found it: what {@code oncegate exporter}
 * serves. Two reads make one:
 * <ul>
 *   <li>{@link #fromIndex}: the backlog index ({@link Operator#backlog}), every key it nominates
 *       confirmed by its own records; its cost follows the backlog. Only the backlog states
 *       (armed, send_status_unknown) are counted in {@link #keys()}.</li>
 *   <li>{@link #walk}: every key, bucket by bucket ({@link Operator#checkIndex}); its cost follows
 *       the keyspace. Every state is counted; it is the authoritative count, and what the index is
 *       held against.</li>
 * </ul>
 * Both tally as they go: constant memory, whatever the number of keys.
 *
 * <p>Immutable and thread-safe.
 *
 * @param source               which read this is
 * @param keys                 readable keys by the state of their latest scope (every state present; from
 *                             the index, only armed and send_status_unknown are counted)
 * @param oldestArmed          when the oldest scope armed without an outcome was armed (by the server's
 *                             clock); null when none is
 * @param unusedAuthorizations redelivery authorizations that would open a scope now
 * @param unreadableRecords    records that could not be read or contradict the protocol (a key with one
 *                             has no state and is not in {@code keys})
 * @param scanned              keys read
 * @param ended                when the read ended
 * @param took                 how long it took
 */
record Backlog(Source source, Map<ScopeState, Long> keys, Instant oldestArmed, long unusedAuthorizations,
               long unreadableRecords, long scanned, Instant ended, Duration took) {

    /** Where a backlog was read from. */
    enum Source {
        /** The backlog index, confirmed key by key. */
        INDEX,
        /** A walk of every key. */
        WALK;

        String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    Backlog {
        keys = Collections.unmodifiableMap(new EnumMap<>(keys));
    }

    /**
     * The backlog from the index, or null when the namespace has none (initialised by an older release).
     *
     * @throws dev.oncegate.OncegateException when ZooKeeper cannot be read, or the namespace has no
     *                                        genesis: no partial backlog is ever returned
     */
    static Backlog fromIndex(Operator operator, Clock clock) throws InterruptedException {
        Tally tally = new Tally(clock);
        Operator.BacklogReport report = operator.backlog(Operator.ListQuery.all(), tally::add);
        return report.indexed() ? tally.done(Source.INDEX) : null;
    }

    /**
     * What {@link #walk} found: the backlog of every key, and the index held against it.
     *
     * @param backlog the walk's tally (source {@link Source#WALK})
     * @param check   what the walk found of the index
     */
    record Walk(Backlog backlog, Operator.IndexCheck check) {

        /** Keys read per second of the walk. */
        double keysPerSecond() {
            double seconds = backlog.took().toNanos() / 1e9;
            return seconds <= 0 ? backlog.scanned() : backlog.scanned() / seconds;
        }
    }

    /**
     * Walks every key of the namespace, and holds the backlog index against it (repairing it where this
     * identity may, when {@code repair}).
     *
     * @throws dev.oncegate.OncegateException when ZooKeeper cannot be read, or the namespace has no
     *                                        genesis: no partial walk is ever returned
     */
    static Walk walk(Operator operator, Clock clock, boolean repair) throws InterruptedException {
        Tally tally = new Tally(clock);
        Operator.IndexCheck check = operator.checkIndex(repair, tally::add);
        return new Walk(tally.done(Source.WALK), check);
    }

    /** The backlog from the index when the namespace has one, else from a walk of every key. */
    static Backlog scan(Operator operator, Clock clock) throws InterruptedException {
        Backlog indexed = fromIndex(operator, clock);
        return indexed != null ? indexed : walk(operator, clock, false).backlog();
    }

    /** Seconds since the oldest armed-without-outcome scope was armed, at {@code now}; 0 when there is none. */
    double armedOldestAgeSeconds(Instant now) {
        if (oldestArmed == null) {
            return 0;
        }
        return Math.max(0, Duration.between(oldestArmed, now).toMillis() / 1000.0);
    }

    /** Counts key summaries as they come. Not thread-safe: one read's thread. */
    private static final class Tally {
        private final Clock clock;
        private final Instant started;
        private final Map<ScopeState, Long> keys = new EnumMap<>(ScopeState.class);
        private Instant oldestArmed;
        private long authorizations;
        private long unreadable;
        private long scanned;

        Tally(Clock clock) {
            this.clock = clock;
            this.started = clock.instant();
            for (ScopeState state : ScopeState.values()) {
                keys.put(state, 0L);
            }
        }

        void add(Operator.KeySummary key) {
            scanned++;
            authorizations += key.unusedAuthorizations();
            unreadable += key.unreadableRecords();
            if (key.state() == null) {
                return;
            }
            keys.merge(key.state(), 1L, Long::sum);
            if (key.state() == ScopeState.ARMED && key.since() != null
                    && (oldestArmed == null || key.since().isBefore(oldestArmed))) {
                oldestArmed = key.since();
            }
        }

        Backlog done(Source source) {
            Instant ended = clock.instant();
            return new Backlog(source, keys, oldestArmed, authorizations, unreadable, scanned, ended,
                    Duration.between(started, ended));
        }
    }
}
