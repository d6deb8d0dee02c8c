package dev.oncegate.bench;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * How often each effect's action ran, per arm. The action of every arm is a call to
 * {@link #execute}; an effect executed twice is the one result that fails a run.
 *
 * <p>Thread-safe.
 */
final class Ledger {

    private final ConcurrentHashMap<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final LongAdder duplicates = new LongAdder();

    /** The action of effect {@code key}: records that it ran once more. */
    void execute(String key) {
        if (runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet() == 2) {
            duplicates.increment();
        }
    }

    /** How many effects ran more than once so far. */
    long duplicates() {
        return duplicates.sum();
    }

    /** Forgets the effects (not the duplicates), so that a memory measurement does not see them. */
    void forgetEffects() {
        runs.clear();
    }
}
