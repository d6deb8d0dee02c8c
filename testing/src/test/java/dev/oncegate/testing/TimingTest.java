package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The kit's one timing property: {@code oncegate.timing.scale}, a positive factor. */
class TimingTest {

    @Test
    void absentOrBlank_isOne() {
        assertThat(Timing.parseScale(null)).isEqualTo(1.0);
        assertThat(Timing.parseScale(" ")).isEqualTo(1.0);
    }

    @Test
    void aPositiveNumber_isTheFactor() {
        assertThat(Timing.parseScale("2")).isEqualTo(2.0);
        assertThat(Timing.parseScale(" 0.5 ")).isEqualTo(0.5);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "two", "NaN", "Infinity"})
    void anythingElse_failsNamingTheProperty(String value) {
        assertThatThrownBy(() -> Timing.parseScale(value)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("oncegate.timing.scale").hasMessageContaining(value);
    }

    @Test
    void everyDuration_isScaledByTheFactorOfThisRun() {
        assertThat(Timing.scaled(Duration.ofSeconds(10))).isEqualTo(Duration.ofMillis(Math.round(10_000 * Timing.SCALE)));
        assertThat(Timing.scaled(2_000)).isEqualTo(Timing.SHORT_LEASE);
        assertThat(Timing.SESSION).isEqualTo(Timing.scaled(Duration.ofSeconds(6)));
    }
}
