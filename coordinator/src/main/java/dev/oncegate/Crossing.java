package dev.oncegate;

import java.util.Objects;

/**
 * What {@link Attempt#cross} did: either the scope was armed and the action invoked
 * ({@link Crossed}), or arming was refused and the action was never invoked ({@link Refused}).
 *
 * <p>Immutable and thread-safe.
 */
public sealed interface Crossing permits Crossing.Crossed, Crossing.Refused {

    /**
     * The action was invoked exactly once.
     *
     * @param outcome  what the action's result means
     * @param scope    the scope crossed
     * @param token    the fencing token it was armed with
     * @param detail   the receipt, the proof of non-delivery, or the reason the status is unknown
     * @param recorded whether the outcome znode was written; when false, everyone reads the
     *                 scope as {@code send_status_unknown} (armed without outcome)
     */
    record Crossed(Outcome outcome, int scope, FencingToken token, String detail, boolean recorded)
            implements Crossing {
        public Crossed {
            Objects.requireNonNull(outcome, "outcome");
            Objects.requireNonNull(token, "token");
            Objects.requireNonNull(detail, "detail");
        }
    }

    /**
     * Arming did not happen (or its result is unknown, which counts as armed); the action was
     * never invoked.
     *
     * @param stop why
     */
    record Refused(Decision.Stop stop) implements Crossing {
        public Refused {
            Objects.requireNonNull(stop, "stop");
        }
    }
}
