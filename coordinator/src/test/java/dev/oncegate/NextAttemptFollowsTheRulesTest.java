package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;

import org.junit.jupiter.api.Test;

/**
 * What {@code inspect} says a new attempt would do is what {@link ContentionRules} decide for a
 * contender that has just read the key, on the operator's clock: not a second account of the rules.
 */
class NextAttemptFollowsTheRulesTest extends ArmedScopeFixture {

    private KeyHistory inspect(Clock clock) throws InterruptedException {
        return Operator.builder(client).namespace(ns).clock(clock).build().inspect(key.key());
    }

    @Test
    void liveLease_onTheOperatorsClock_aNewAttemptWouldStopBusy() throws Exception {
        // Given executor "a" holds scope 0's lease for another 30 s
        leaseScopeZero("a");

        // When an operator whose clock agrees inspects the key
        KeyHistory history = inspect(Clock.systemUTC());

        // Then a new attempt would stop busy, as the rules decide for a contender that does not wait
        assertThat(history.nextAttempt()).contains("holds the lease of scope 0").contains("would stop busy")
                .doesNotContain("exit");
        assertThat(history.nextStop()).isInstanceOfSatisfying(Decision.StopBusy.class, stop -> {
            assertThat(stop.reason()).isEqualTo(StopReason.EXECUTOR_ACTIVE);
            assertThat(stop.evidence().task()).isEqualTo(history.scopes().get(0).lease().holder().task());
            assertThat(stop.evidence().path()).isEqualTo(history.scopes().get(0).path());
        });
    }

    @Test
    void leaseLapsedOnTheOperatorsClock_aNewAttemptWouldTakeItOver() throws Exception {
        // Given executor "a" holds scope 0's lease for another 30 s by the wall clock
        leaseScopeZero("a");

        // When an operator whose clock is a minute ahead inspects the key
        KeyHistory history = inspect(Clock.offset(Clock.systemUTC(), Duration.ofMinutes(1)));

        // Then, on that clock, the lease lapsed and a new attempt would take it over (the wall clock plays no part)
        assertThat(history.nextAttempt()).contains("lapsed").contains("take it over");
        assertThat(history.nextStop()).as("taking a lapsed lease over is no stop").isNull();
    }

    @Test
    void armedWithoutOutcome_aNewAttemptWouldStopUnknown() throws Exception {
        // Given executor "a" armed scope 0 and recorded no outcome
        armAs("a");

        // When an operator inspects the key, Then a new attempt would stop unknown, whoever's clock
        KeyHistory history = inspect(Clock.offset(Clock.systemUTC(), Duration.ofDays(1)));
        assertThat(history.nextAttempt()).contains("armed scope 0").contains("would stop unknown").doesNotContain("exit");
        assertThat(history.nextStop()).isInstanceOfSatisfying(Decision.StopUnknown.class,
                stop -> assertThat(stop.reason()).isEqualTo(StopReason.ARMED_WITHOUT_OUTCOME));
    }
}
