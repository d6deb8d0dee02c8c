package dev.oncegate;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Objects;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;

/**
 * What {@link Gate.Builder}, {@link Operator.Builder} and the methods taking durations check
 * alike: a setter called once, a duration's lower bound, a host name fit for the records, a
 * started client, and the host name they default to.
 *
 * <p>Stateless; thread-safe.
 */
final class BuilderChecks {

    private BuilderChecks() {
    }

    /** Refuses a second call of the setter of {@code field}, whose value is {@code current}. */
    static void once(Object current, String field) {
        if (current != null) {
            throw new IllegalStateException(field + ": already set");
        }
    }

    /**
     * {@code value}, checked: not null (NullPointerException naming {@code field}) and not
     * shorter than {@code min} (IllegalArgumentException: "must not be negative" for a minimum of
     * zero, else "must be at least N ms").
     */
    static Duration atLeast(String field, Duration value, Duration min) {
        Objects.requireNonNull(value, field);
        if (value.compareTo(min) < 0) {
            throw new IllegalArgumentException(field + ": must " + (min.isZero() ? "not be negative"
                    : "be at least " + min.toMillis() + " ms") + ", got " + value);
        }
        return value;
    }

    /** {@code host}, checked: 1 to 256 characters, well-formed for a record. */
    static String host(String host) {
        Objects.requireNonNull(host, "host");
        if (host.isEmpty() || host.length() > 256) {
            throw new IllegalArgumentException("host: must be 1 to 256 characters");
        }
        return Records.requireWellFormed("host", host);
    }

    /** Refuses a client that is not started; {@code built} names what was being built ("a gate"). */
    static void requireStarted(CuratorFramework client, String built) {
        if (client.getState() != CuratorFrameworkState.STARTED) {
            throw new IllegalStateException("client: the CuratorFramework must be started before building " + built);
        }
    }

    /** The local host name, else $HOSTNAME. */
    static String localHost() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            String fromEnv = System.getenv("HOSTNAME");
            if (fromEnv != null && !fromEnv.isEmpty()) {
                return fromEnv;
            }
            throw new UncheckedIOException("host: cannot determine the local host name; set it with Builder.host()", e);
        }
    }
}
