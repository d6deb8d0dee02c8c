package dev.oncegate.testing;

import java.time.Duration;
import java.util.Objects;

/**
 * Every wait and timeout of the test kit and of tests written with it, scaled by one factor: the
 * system property {@value #SCALE_PROPERTY} (default 1). On a slow or shared machine run the tests
 * with {@code -Doncegate.timing.scale=2} and every session timeout, wait bound and poll limit
 * doubles; nothing else reads a timing property.
 *
 * <p>The kit itself uses these values: {@link ZooKeeperExtension}'s clients and workers open
 * their sessions with {@link #SESSION}, {@link Race} and {@link CrossingInFlight} bound their
 * threads with {@link #EVENTUALLY}. Scale a literal of your own with {@link #scaled(Duration)}.
 * The embedded server caps sessions at 20 s (its tick time is 1 s), whatever the factor.
 *
 * <p>Read once, when the class is initialised; immutable and thread-safe.
 */
public final class Timing {

    /** The one property: a positive factor applied to every duration below. */
    public static final String SCALE_PROPERTY = "oncegate.timing.scale";

    /** The factor read from {@value #SCALE_PROPERTY}. */
    public static final double SCALE = parseScale(System.getProperty(SCALE_PROPERTY));

    /**
     * Session timeout of every client and worker the kit opens: short, so that expiry scenarios
     * stay fast, while a loaded 2-core machine still keeps its sessions.
     */
    public static final Duration SESSION = scaled(Duration.ofSeconds(6));

    /**
     * The longest session the kit's embedded servers grant (20 s, not scaled: they cap it there): for
     * a worker whose request a test holds at the server ({@link AmbiguousWriteCnxnFactory.Hold}). A
     * held request holds up its connection's pings too, and the client ends a connection that has
     * said nothing for two thirds of its session, so this leaves about 13 s between hold and release.
     */
    public static final Duration LONG_SESSION = Duration.ofSeconds(20);

    /** How long a contender waits ({@code gate.enter(key, WAIT)}) when a test wants it to wait for the executor. */
    public static final Duration WAIT = scaled(Duration.ofSeconds(30));

    /** Upper bound for anything a test waits or polls for in its own JVM (a latch, a future, a watch). */
    public static final Duration EVENTUALLY = scaled(Duration.ofSeconds(30));

    /** A short lease TTL, for scenarios where an executor hangs past its lease and is fenced. */
    public static final Duration SHORT_LEASE = scaled(Duration.ofSeconds(2));

    /** Upper bound for a process a test starts and expects to finish (a CLI run: its JVM start included). */
    public static final Duration PROCESS = scaled(Duration.ofSeconds(90));

    /** Upper bound for something another process is expected to show (a ledger line, a server's start line). */
    public static final Duration APPEAR = scaled(Duration.ofSeconds(60));

    private Timing() {
    }

    /** {@code d} multiplied by {@link #SCALE}. */
    public static Duration scaled(Duration d) {
        Objects.requireNonNull(d, "d");
        return Duration.ofMillis(Math.round(d.toMillis() * SCALE));
    }

    /** {@code millis} milliseconds multiplied by {@link #SCALE}. */
    public static Duration scaled(long millis) {
        return scaled(Duration.ofMillis(millis));
    }

    /** The factor in {@code value}; 1 when absent; a clear failure when it is not a positive number. */
    static double parseScale(String value) {
        if (value == null || value.isBlank()) {
            return 1;
        }
        double scale;
        try {
            scale = Double.parseDouble(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(SCALE_PROPERTY + ": must be a positive number, got '" + value + "'", e);
        }
        if (!(scale > 0) || Double.isInfinite(scale)) {
            throw new IllegalArgumentException(SCALE_PROPERTY + ": must be a positive number, got '" + value + "'");
        }
        return scale;
    }
}
