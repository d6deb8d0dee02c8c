package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Histories the simulator once failed on, replayed exactly (seed and world) on every build: each
 * names the bug it found. A history that fails again prints its steps.
 */
class SimulationRegressionTest {

    @ParameterizedTest(name = "seed {0} ({2})")
    @CsvSource(delimiter = ';', value = {
            // a contender whose wait passed three lease TTLs ended wait_expired on an armed scope
            "1299; 5,1,false,false,true,true,243; armed scope, long wait",
            // a creator that leased scope 1 (scope 0 not_sent under another) crossed with key zxid 0
            "5643; 5,2,false,false,true,true,189; creator crossing a later scope",
            // a deleteall of the namespace under way deleted a delivered scope's armed record; the scope read open
            // and a second contender delivered in it (the scope's arming flag now makes it unreadable)
            "180; 5,1,true,false,true,false,168,true; wipe under way, scope read open",
            // a contender whose attempt began before the key was deleted (the wipe) and created again crossed with
            // the old incarnation's key zxid (its idempotency key named a key that no longer existed)
            "3805; 4,1,true,false,true,false,207,true; key recreated during an attempt",
            // with the arming multi's genesis check removed, a contender that joined the election after the wipe
            // listed the tree armed after the genesis was deleted (issue 16's breakage (b), found here)
            "5746; 5,2,true,false,true,false,212,true; arming after the genesis was wiped",
            // the first world with interrupts: an executor whose arming wait was interrupted recorded not_sent
            // without invoking the action (as it must), which the checker took for a not_sent nobody crossed
            "7031743039267948150; 2,1,true,true,true,false,281,false,true; arming interrupted, never invoked",
    })
    void formerlyFailingHistory_holdsEveryInvariant(long seed, String config, String bug) {
        SimWorld.Result r = new SimWorld(seed, SimWorld.Config.decode(config)).run();
        if (r.failed()) {
            r.trace().forEach(System.out::println);
        }
        assertThat(r.violations()).as("seed %d (%s)", seed, bug).isEmpty();
    }

    /**
     * Liveness histories, not invariants': an interrupted worker left an unarmed lease whose election
     * node was still there (a no-wait contender then stopped busy for a lease TTL). Each names how.
     */
    @ParameterizedTest(name = "seed {0} ({2})")
    @CsvSource(delimiter = ';', value = {
            // refused by an armed record the rogue forged under its lease, the interrupted executor could not read
            // what refused it, took the refusal for a fence and kept the lease
            "9146216; 4,1,true,true,true,false,221,false,true; crossing: refused FENCED",
            // interrupted while its checkpoint's renewal was in flight, and again while it asked whether the renewal
            // landed: its release carried the old token
            "9387934; 3,2,true,true,true,true,348,false,true; checkpoint: proceed",
    })
    void interruptedWorker_leavesNoLeaseWithItsElectionNodePresent(long seed, String config, String exercised) {
        SimWorld.Result r = new SimWorld(seed, SimWorld.Config.decode(config)).run();
        assertThat(r.rules()).as("rules exercised").containsKey(exercised)
                .noneSatisfy((rule, count) -> assertThat(rule).contains("its election node present"));
        assertThat(r.violations()).isEmpty();
    }
}
