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
    })
    void formerlyFailingHistory_holdsEveryInvariant(long seed, String config, String bug) {
        SimWorld.Result r = new SimWorld(seed, SimWorld.Config.decode(config)).run();
        if (r.failed()) {
            r.trace().forEach(System.out::println);
        }
        assertThat(r.violations()).as("seed %d (%s)", seed, bug).isEmpty();
    }
}
