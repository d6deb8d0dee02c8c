package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import dev.oncegate.DefaultAttempt.Phase;

/**
 * The attempt's table of phase changes ({@link DefaultAttempt.Phase}), which its one
 * {@code transitionTo} enforces: every change the state machine makes is allowed, and the changes
 * that would break it (an armed scope stopping as if unarmed, crossing twice, reviving a closed
 * attempt) are refused.
 */
class AttemptPhaseTransitionsTest {

    /** The state machine of {@link DefaultAttempt}'s javadoc, written out again. */
    private static final Map<Phase, Set<Phase>> EXPECTED = Map.of(
            Phase.CONTENDING, EnumSet.of(Phase.PROCEEDING, Phase.STOPPED, Phase.CLOSED),
            Phase.PROCEEDING, EnumSet.of(Phase.ARMED, Phase.STOPPED, Phase.CLOSED),
            Phase.ARMED, EnumSet.of(Phase.DONE, Phase.CLOSED),
            Phase.DONE, EnumSet.of(Phase.CLOSED),
            Phase.STOPPED, EnumSet.of(Phase.CLOSED),
            Phase.CLOSED, EnumSet.noneOf(Phase.class));

    @Test
    void everyPairOfPhases_isAllowedExactlyWhenTheStateMachineHasThatChange() {
        // Given every phase and every phase it might change to
        for (Phase from : Phase.values()) {
            for (Phase to : Phase.values()) {
                // When the table is asked, Then it answers as the state machine says
                assertThat(from.mayBecome(to)).as(from + " -> " + to).isEqualTo(EXPECTED.get(from).contains(to));
            }
        }
    }

    @Test
    void allowedChanges_passTheCheck() {
        // Given the changes the attempt makes, When each is checked, Then none is refused
        EXPECTED.forEach((from, targets) -> targets.forEach(from::requireMayBecome));
    }

    @Test
    void armedScope_cannotStopOrGoBackToProceeding() {
        // Given an armed attempt: its scope is consumed whatever happens next
        // When it would stop (and release its lease) or proceed again, Then the change is refused
        assertThatThrownBy(() -> Phase.ARMED.requireMayBecome(Phase.STOPPED))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("armed to stopped");
        assertThatThrownBy(() -> Phase.ARMED.requireMayBecome(Phase.PROCEEDING))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void contendingAttempt_cannotArmWithoutProceedingFirst() {
        // Given an attempt that holds no lease, When it would arm, Then the change is refused
        assertThatThrownBy(() -> Phase.CONTENDING.requireMayBecome(Phase.ARMED))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("contending to armed");
    }

    @Test
    void endedAttempts_cannotComeBack() {
        // Given attempts that are done, stopped or closed
        // When they would proceed, arm or close twice, Then each change is refused
        assertThatThrownBy(() -> Phase.DONE.requireMayBecome(Phase.ARMED)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> Phase.STOPPED.requireMayBecome(Phase.PROCEEDING))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> Phase.CLOSED.requireMayBecome(Phase.CLOSED)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> Phase.CLOSED.requireMayBecome(Phase.CONTENDING))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void noPhase_changesBackToContending() {
        // Given any phase, When it would contend again, Then it may not: an attempt contends once
        for (Phase from : Phase.values()) {
            assertThat(from.mayBecome(Phase.CONTENDING)).as(from.name()).isFalse();
        }
    }
}
