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
 * Every contender waits for an active executor's final decision. Two ways to hold gates:
 * {@link #perWorker} ({@code oncegate}), a gate per worker over its own session, in every
 * workload; and {@link #shared} ({@code oncegate_shared}), one gate over one session that every
 * worker's thread enters at once, as a service with one gate and a pool of threads does, on
 * {@link Workload#NEW_KEYS_16} only (the question it answers is what sharing a gate and its
 * session costs the threads; with one worker it is the other arm).
 *
 * <p>Thread-safe: gates are; each attempt belongs to the worker's thread.
 *
 * @param namespace the gates' namespace
 * @param shared    whether every worker uses worker 0's gate
 */
record OncegateArm(Fleet fleet, String namespace, boolean shared) implements Arm {

    /** How long a contender waits for another executor's final decision. */
    static final Duration WAIT = Duration.ofSeconds(60);
    private static final Destination DESTINATION = Destination.stable("bench", "channel-1");

    /** A gate per worker, each over the worker's own session. */
    static OncegateArm perWorker(Fleet fleet, String namespace) {
        return new OncegateArm(fleet, namespace, false);
    }

    /** One gate, over worker 0's session, for every worker's thread. */
    static OncegateArm shared(Fleet fleet, String namespace) {
        return new OncegateArm(fleet, namespace, true);
    }

    @Override
    public String name() {
        return shared ? "oncegate_shared" : "oncegate";
    }

    @Override
    public boolean runs(Workload workload) {
        return !shared || workload == Workload.NEW_KEYS_16;
    }

    @Override
    public void prepare(int workers) throws InterruptedException {
        Gate.initialize(fleet.client(0), namespace);
        for (int w = 0; w < (shared ? 1 : workers); w++) {
            fleet.gate(w, namespace);
        }
    }

    @Override
    public Verdict attempt(int worker, String key, Ledger ledger) throws InterruptedException {
        try (Attempt attempt = fleet.gate(shared ? 0 : worker, namespace).enter(EffectKey.of(DESTINATION, key), WAIT)) {
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
