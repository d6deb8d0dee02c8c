package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The long soak, off by default: {@code mvn -B verify -Psoak}, sized with
 * {@code -Doncegate.soak.duration=PT30M -Doncegate.soak.effects=5000 -Doncegate.chaos.seed=N}.
 * Runs a standalone server, then a 3-server ensemble, then worker processes, each for the duration.
 */
@EnabledIfSystemProperty(named = "oncegate.soak", matches = "true")
class ChaosSoakTest {

    static Duration duration() {
        return Duration.parse(System.getProperty("oncegate.soak.duration", "PT5M"));
    }

    static int effects() {
        return Integer.parseInt(System.getProperty("oncegate.soak.effects", "2000"));
    }

    @Test
    void soak_standalone() throws Exception {
        soak(false);
    }

    @Test
    void soak_ensemble() throws Exception {
        soak(true);
    }

    @Test
    void soak_workerProcesses() throws Exception {
        long seed = ChaosSuiteTest.seed();
        System.out.println("soak process chaos seed " + seed);
        ProcessChaosRun.Report report = ProcessChaosRun.run(new ProcessChaosRun.Config(4, effects() / 10, 3, duration(),
                0.05, seed, Duration.ofMinutes(3)));
        System.out.println("soak process chaos report " + report);
        assertThat(report.ok()).as("seed " + seed + ": " + report.verdict().violations()).isTrue();
    }

    private void soak(boolean ensemble) throws Exception {
        long seed = ChaosSuiteTest.seed();
        System.out.println("soak seed " + seed + " ensemble=" + ensemble);
        ChaosRun.Report report = ChaosRun.run(ChaosRun.builder().seed(seed).ensemble(ensemble).workers(8)
                .effects(effects()).contenders(4).duration(duration()).faultRate(0.5)
                .settle(Duration.ofMinutes(3)).build(), p -> System.out.println("soak progress " + p));
        System.out.println("soak report " + report);
        assertThat(report.ok()).as("seed " + seed + ": " + report.verdict().violations()).isTrue();
    }
}
