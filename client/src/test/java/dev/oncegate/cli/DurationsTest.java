package dev.oncegate.cli;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DurationsTest {

    @ParameterizedTest
    @CsvSource({"250ms,250", "30s,30000", "5m,300000", "1h,3600000", "0,0", "15,15000", "1.5,1500",
            "1m30s,90000", "2h,7200000", "1d,86400000", "1d2h3m4s5ms,93784005", "1.5h,5400000",
            "1.5s,1500", "PT30S,30000", "PT0.25S,250", "pt1m,60000"})
    void parse_acceptedForms_giveTheDuration(String text, long millis) {
        assertThat(Durations.parse(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "abc", "5x", "s", "-1s", "-5", "PT-1S", "-PT1S", "1.s", "ms", "1 s", "30s1m", "1m1m", "1h 30m", "1d-1h"})
    void parse_malformedOrNegative_isRefused(String text) {
        assertThatThrownBy(() -> Durations.parse(text)).isInstanceOf(CommandLine.TypeConversionException.class);
    }

    @Test
    void parse_refusalSaysWhy() {
        assertThatThrownBy(() -> Durations.parse("-1s")).hasMessageContaining("negative");
        assertThatThrownBy(() -> Durations.parse("soon")).hasMessageContaining("250ms");
    }

    /** Past what toNanos() holds, in either syntax (a --timeout of PT2600000H killed its command at once). */
    @ParameterizedTest
    @ValueSource(strings = {"PT2600000H", "P200000D", "106752d", "9223372036855s"})
    void parse_tooLong_isRefused(String text) {
        assertThatThrownBy(() -> Durations.parse(text)).hasMessageContaining("too long");
    }

    @Test
    void parse_theLongestDuration_stillConvertsToNanoseconds() {
        assertThat(Durations.parse(Durations.MAX.toMillis() + "ms").toNanos()).isPositive();
        assertThat(Durations.parse("106751d")).isEqualTo(Duration.ofDays(106_751));
    }

    @Test
    void format_isCompact() {
        assertThat(Durations.format(Duration.ofSeconds(2))).isEqualTo("2s");
        assertThat(Durations.format(Duration.ofMillis(250))).isEqualTo("250ms");
    }
}
