package dev.oncegate;

/**
 * A protocol step found a reason to stop that it can name precisely (a wiped namespace, say).
 * Internal: the attempt turns it into its stop decision; an operator call, which has no decision
 * to give, lets it go (an {@link OncegateException}: the state is unavailable, fail closed).
 */
final class StopException extends OncegateException {

    private final Decision.StopUnavailable stop;

    StopException(Decision.StopUnavailable stop) {
        super(stop.evidence().detail());
        this.stop = stop;
    }

    Decision.StopUnavailable stop() {
        return stop;
    }
}
