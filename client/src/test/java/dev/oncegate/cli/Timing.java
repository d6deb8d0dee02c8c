package dev.oncegate.cli;

import java.time.Duration;

/**
 * Every wait in the CLI tests, scaled from one factor ({@code -Doncegate.timing.scale=2} on a
 * slow machine). Generous: the build machine has 2 cores shared with other builds, and each
 * CLI call starts a JVM.
 */
final class Timing {

    static final double SCALE = Double.parseDouble(System.getProperty("oncegate.timing.scale", "1"));

    /** Upper bound for one CLI process that is expected to finish. */
    static final Duration PROCESS = scaled(Duration.ofSeconds(90));
    /** Upper bound for something to show up (a ledger line, a server's start line). */
    static final Duration APPEAR = scaled(Duration.ofSeconds(60));

    private Timing() {
    }

    static Duration scaled(Duration d) {
        return Duration.ofMillis((long) (d.toMillis() * SCALE));
    }
}
