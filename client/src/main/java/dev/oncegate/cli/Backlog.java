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
 * The durable backlog of a namespace as one complete scan found it: what {@code oncegate
 * exporter} serves. A scan is {@link Operator#list} over every key, bucket by bucket (each
 * parent's child list stays small), tallied here as it goes: constant memory, whatever the number
 * of keys.
 *
 * <p>Immutable and thread-safe.
 *
 * @param keys                 readable keys by the state of their latest scope (every state present)
 * @param oldestArmed          when the oldest scope armed without an outcome was armed (by its executor's
 *                             clock); null when none is
 * @param unusedAuthorizations redelivery authorizations that would open a scope now
 * @param unreadableRecords    records that could not be read or contradict the protocol (a key with one
 *                             has no state and is not in {@code keys})
 * @param ended                when the scan ended
 * @param took                 how long it took
 */
record Backlog(Map<ScopeState, Long> keys, Instant oldestArmed, long unusedAuthorizations, long unreadableRecords,
               Instant ended, Duration took) {

    Backlog {
        keys = Collections.unmodifiableMap(new EnumMap<>(keys));
    }

    /**
     * Walks every key of the namespace.
     *
     * @throws dev.oncegate.OncegateException when ZooKeeper cannot be read, or the namespace has no
     *                                        genesis: no partial backlog is ever returned
     */
    static Backlog scan(Operator operator, Clock clock) throws InterruptedException {
        Instant started = clock.instant();
        Map<ScopeState, Long> keys = new EnumMap<>(ScopeState.class);
        for (ScopeState state : ScopeState.values()) {
            keys.put(state, 0L);
        }
        Instant[] oldestArmed = {null};
        long[] authorizations = {0};
        long[] unreadable = {0};
        operator.list(Operator.ListQuery.all(), key -> {
            authorizations[0] += key.unusedAuthorizations();
            unreadable[0] += key.unreadableRecords();
            if (key.state() == null) {
                return;
            }
            keys.merge(key.state(), 1L, Long::sum);
            if (key.state() == ScopeState.ARMED && key.since() != null
                    && (oldestArmed[0] == null || key.since().isBefore(oldestArmed[0]))) {
                oldestArmed[0] = key.since();
            }
        });
        Instant ended = clock.instant();
        return new Backlog(keys, oldestArmed[0], authorizations[0], unreadable[0], ended, Duration.between(started, ended));
    }

    /** Seconds since the oldest armed-without-outcome scope was armed, at {@code now}; 0 when there is none. */
    double armedOldestAgeSeconds(Instant now) {
        if (oldestArmed == null) {
            return 0;
        }
        return Math.max(0, Duration.between(oldestArmed, now).toMillis() / 1000.0);
    }
}
