package dev.oncegate;

import java.util.Objects;

/**
 * What a contender may do about one effect. A value: either {@link Proceed} (this contender is
 * the executor of the scope and holds its lease) or one of the four stops, each carrying its
 * {@link StopReason} and the {@link Evidence} it rests on.
 *
 * <p>Immutable and thread-safe.
 */
public sealed interface Decision
        permits Decision.Proceed, Decision.Stop {

    /** The decision's wire name: {@code proceed}, {@code stop_sent}, … */
    String kind();

    /** Whether this contender may go on towards the boundary. */
    default boolean proceeds() {
        return this instanceof Proceed;
    }

    /**
     * This contender is the scope's executor.
     *
     * @param scope the scope number it will cross
     * @param token its fencing token at the time of the decision
     */
    record Proceed(int scope, FencingToken token) implements Decision {
        public Proceed {
            Objects.requireNonNull(token, "token");
        }

        @Override
        public String kind() {
            return "proceed";
        }
    }

    /**
     * A decision not to proceed, with its reason and evidence. Its {@link #kind()} is its
     * record's: {@code stop_sent}, {@code stop_unknown}, {@code stop_busy} or {@code stop_unavailable}.
     */
    sealed interface Stop extends Decision permits StopSent, StopUnknown, StopBusy, StopUnavailable {
        StopReason reason();

        Evidence evidence();

        @Override
        default String kind() {
            if (this instanceof StopSent) {
                return "stop_sent";
            }
            if (this instanceof StopUnknown) {
                return "stop_unknown";
            }
            return this instanceof StopBusy ? "stop_busy" : "stop_unavailable";
        }

        /** The null checks every stop's constructor makes. */
        private static void require(StopReason reason, Evidence evidence) {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(evidence, "evidence");
        }
    }

    /** The key is consumed: delivery was verified. */
    record StopSent(StopReason reason, Evidence evidence) implements Stop {
        public StopSent {
            Stop.require(reason, evidence);
        }
    }

    /** The key is consumed: delivery may have happened (or someone armed the scope). */
    record StopUnknown(StopReason reason, Evidence evidence) implements Stop {
        public StopUnknown {
            Stop.require(reason, evidence);
        }
    }

    /** Another executor is active (or took this one's lease over). */
    record StopBusy(StopReason reason, Evidence evidence) implements Stop {
        public StopBusy {
            Stop.require(reason, evidence);
        }
    }

    /** The state could not be established: fail closed. */
    record StopUnavailable(StopReason reason, Evidence evidence) implements Stop {
        public StopUnavailable {
            Stop.require(reason, evidence);
        }
    }
}
