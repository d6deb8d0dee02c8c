package dev.oncegate.testing;

import java.time.Duration;
import java.util.Random;

import dev.oncegate.ActionResult;
import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.OncegateException;
import dev.oncegate.Outcome;

/**
 * One chaos contender's life: enter, and if elected maybe pass a checkpoint, then cross with a
 * randomly chosen provider behaviour (mostly verified; sometimes a proven rejection, a lost
 * reply or a failure after delivering); back off and enter again on busy or unavailable, until
 * the effect is decided or the deadline passes. Shared by in-process and worker-process runs.
 *
 * <p>Stateless; each call runs on its caller's thread.
 */
final class ChaosContender {

    /** Where a run observes (or kills) a contender; called on the contender's thread. */
    interface Hooks {
        /** Reached {@code proceed}, {@code armed}, {@code delivered} or {@code outcome}. */
        void phase(String phase) throws InterruptedException;

        /** Whether this executor should now hang past its lease TTL before crossing. */
        boolean pauseNow();
    }

    private ChaosContender() {
    }

    /** @return whether the effect was seen decided */
    static boolean run(Gate gate, EffectKey key, Random random, long hardDeadlineNanos, RecordingProvider provider,
                       Duration leaseTtl, Hooks hooks) throws InterruptedException {
        while (System.nanoTime() < hardDeadlineNanos) {
            try (Attempt attempt = gate.enter(key, Duration.ofMillis(random.nextInt(2000)))) {
                Decision decision = attempt.decision();
                if (decision instanceof Decision.StopSent || decision instanceof Decision.StopUnknown) {
                    return true;
                }
                if (decision instanceof Decision.Proceed) {
                    hooks.phase("proceed");
                    if (hooks.pauseNow()) {
                        Thread.sleep(leaseTtl.toMillis() * 3 / 2); // a hung executor: its lease lapses
                    }
                    if (random.nextBoolean() && !attempt.checkpoint("before-action").proceeds()) {
                        continue;
                    }
                    Crossing crossing = attempt.cross(observed(action(provider, random), hooks));
                    hooks.phase("outcome");
                    if (crossing instanceof Crossing.Crossed crossed && crossed.outcome() != Outcome.NOT_SENT) {
                        return true;
                    }
                    continue;
                }
                Thread.sleep(50 + random.nextInt(250)); // busy or unavailable: back off, enter again
            } catch (OncegateException | IllegalStateException e) {
                Thread.sleep(100);
            }
        }
        return false;
    }

    private static BoundaryAction action(RecordingProvider provider, Random random) {
        int roll = random.nextInt(100);
        if (roll < 85) {
            return provider.verified();
        }
        if (roll < 92) {
            return provider.rejects("the provider refused the upload before accepting it");
        }
        if (roll < 96) {
            return provider.unconfirmed();
        }
        return provider.deliversThenFails(new IllegalStateException("timeout reading the provider's reply"));
    }

    private static BoundaryAction observed(BoundaryAction inner, Hooks hooks) {
        return ctx -> {
            hooks.phase("armed");
            ActionResult result = inner.deliver(ctx);
            hooks.phase("delivered");
            return result;
        };
    }
}
