package dev.oncegate.cli;

import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Outcome;

/**
 * The exit codes of the README's "Command-line client", shared by every subcommand: {@code run} uses all of them;
 * the operator and server commands use 0, 2 and 13; {@code demo} uses 0, 1, 2 and 130.
 */
final class ExitCode {

    /** This run delivered: {@code sent_verified}. */
    static final int SENT_VERIFIED = 0;
    /** Any command other than {@code run} succeeded (the same code as {@link #SENT_VERIFIED}). */
    static final int OK = 0;
    /** This run crossed the boundary and the outcome is unknown: {@code send_status_unknown}. */
    static final int SEND_STATUS_UNKNOWN = 1;
    /** Usage error or bad input; nothing was written. */
    static final int USAGE = 2;
    /** This run's command proved {@code not_sent}; the key is free for a new executor. */
    static final int NOT_SENT = 3;
    /** Stopped: the key is consumed, {@code sent_verified}. */
    static final int STOP_SENT = 10;
    /** Stopped: the key is consumed, status unknown (or armed by another executor). */
    static final int STOP_UNKNOWN = 11;
    /** Stopped: another executor is active, or this one was fenced. */
    static final int STOP_BUSY = 12;
    /** Stopped: state unavailable (fail closed), ZooKeeper unreachable included. */
    static final int STOP_UNAVAILABLE = 13;

    private ExitCode() {
    }

    static int of(Decision.Stop stop) {
        if (stop instanceof Decision.StopSent) {
            return STOP_SENT;
        }
        if (stop instanceof Decision.StopUnknown) {
            return STOP_UNKNOWN;
        }
        if (stop instanceof Decision.StopBusy) {
            return STOP_BUSY;
        }
        return STOP_UNAVAILABLE;
    }

    static int of(Crossing crossing) {
        if (crossing instanceof Crossing.Refused refused) {
            return of(refused.stop());
        }
        Crossing.Crossed crossed = (Crossing.Crossed) crossing;
        if (!crossed.recorded()) {
            // What the records say: an outcome that could not be written leaves the scope armed
            // without outcome, which every later contender reads as send_status_unknown.
            return SEND_STATUS_UNKNOWN;
        }
        return switch (crossed.outcome()) {
            case SENT_VERIFIED -> SENT_VERIFIED;
            case NOT_SENT -> NOT_SENT;
            case SEND_STATUS_UNKNOWN -> SEND_STATUS_UNKNOWN;
        };
    }
}
