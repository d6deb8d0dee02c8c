package dev.oncegate.testing;

import java.time.Duration;

/**
 * Every wait in the scenario suite, scaled from one constant. Set
 * {@code -Doncegate.test.timing=2} to double them on a slow or shared machine.
 */
final class Timing {

    static final double SCALE = Double.parseDouble(System.getProperty("oncegate.test.timing", "1"));

    /** Session timeout of every worker: short, so expiry scenarios stay fast. */
    static final Duration SESSION = scaled(5_000);

    /** How long a contender waits for an active executor when the scenario wants it to wait. */
    static final Duration WAIT = scaled(30_000);

    /** Upper bound for anything the test polls for (Awaitility's atMost). */
    static final Duration EVENTUALLY = scaled(30_000);

    /** A short lease, for fencing scenarios. */
    static final Duration SHORT_LEASE = scaled(2_000);

    private Timing() {
    }

    static Duration scaled(long millis) {
        return Duration.ofMillis((long) (millis * SCALE));
    }
}
