package dev.oncegate.bench;

import java.time.Duration;

import dev.oncegate.ActionResult;
import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;

/**
 * oncegate itself, through its public API only ({@link Gate#enter}, {@link Attempt#cross},
 * {@link Gate#initialize}), so the benchmark measures whatever the gate's internals are today.
 * Every worker has its own gate over its own session; every contender waits for an active
 * executor's final decision.
 *
 * <p>Thread-safe: gates are; each attempt belongs to the worker's thread.
 *
 * @param namespace the gates' namespace
 */
record OncegateArm(Fleet fleet, String namespace) implements Arm {

    /** How long a contender waits for another executor's final decision. */
    static final Duration WAIT = Duration.ofSeconds(60);
    private static final Destination DESTINATION = Destination.stable("bench", "channel-1");

    @Override
    public String name() {
        return "oncegate";
    }

    @Override
    public void prepare(int workers) throws InterruptedException {
        Gate.initialize(fleet.client(0), namespace);
        for (int w = 0; w < workers; w++) {
            fleet.gate(w, namespace);
        }
    }

    @Override
    public Verdict attempt(int worker, String key, Ledger ledger) throws InterruptedException {
        try (Attempt attempt = fleet.gate(worker, namespace).enter(EffectKey.of(DESTINATION, key), WAIT)) {
            Decision decision = attempt.decision();
            if (decision instanceof Decision.Proceed) {
                Crossing crossing = attempt.cross(context -> {
                    ledger.execute(key);
                    return ActionResult.verified("bench");
                });
                return crossing instanceof Crossing.Crossed ? Verdict.EXECUTED : Verdict.UNDECIDED;
            }
            return decision instanceof Decision.StopSent || decision instanceof Decision.StopUnknown
                    ? Verdict.STOPPED : Verdict.UNDECIDED;
        }
    }
}
