package dev.oncegate.testing;

import java.time.Duration;

/**
 * How long the bounded explorations of the default suite run (chaos, the rogue worker, threads
 * sharing a witness): short by default, so that the suite answers in minutes, and long under
 * {@code mvn -B verify -Plong}, which sets {@code -Doncegate.long=true}. The randomised ones print
 * their seed and replay with it either way. Not instantiable; reads a system property only.
 */
final class LongRuns {

    static final String PROPERTY = "oncegate.long";

    private LongRuns() {
    }

    /** Whether this is the {@code -Plong} run. */
    static boolean on() {
        return Boolean.getBoolean(PROPERTY);
    }

    /** {@code usual} in the default suite, {@code long} under {@code -Plong}. */
    static Duration of(Duration usual, Duration longer) {
        return on() ? longer : usual;
    }
}
