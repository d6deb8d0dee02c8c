package dev.oncegate.cli;

import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.List;
import java.util.Random;
import java.util.TimeZone;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The log lines' timestamp ({@link CliLogging#timestamp}) is what {@link SimpleDateFormat} makes of
 * {@link CliLogging#DATE_FORMAT}, in zones whose offsets are whole hours, half and quarter hours,
 * negative, and (before 1900) not whole minutes; over instants from 1900 to 2200 at random (seed
 * printed; replay with {@code -Doncegate.timestamp.seed=N}) and around daylight-saving changes.
 */
class LogTimestampTest {

    private static final List<String> ZONES = List.of("UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata",
            "America/St_Johns", "Pacific/Chatham", "Asia/Kathmandu", "Europe/Amsterdam", "Pacific/Kiritimati",
            "America/Adak");

    @Test
    void isSimpleDateFormatsRendering_inEveryZone() {
        long seed = Long.getLong("oncegate.timestamp.seed", System.nanoTime());
        System.out.println("LogTimestampTest seed " + seed + " (replay: -Doncegate.timestamp.seed=" + seed + ")");
        Random random = new Random(seed);
        long from = -2_208_988_800_000L; // 1900-01-01
        long to = 7_258_118_400_000L; // 2200-01-01
        for (String id : ZONES) {
            TimeZone zone = TimeZone.getTimeZone(id);
            SimpleDateFormat format = new SimpleDateFormat(CliLogging.DATE_FORMAT);
            format.setTimeZone(zone);
            for (int i = 0; i < 5_000; i++) {
                long millis = from + (long) (random.nextDouble() * (to - from));
                assertThat(CliLogging.timestamp(millis, zone)).as("%s at %d, seed %d", id, millis, seed)
                        .isEqualTo(format.format(new Date(millis)));
            }
            // Each side of this year's and next year's changes of offset, to the millisecond.
            for (long millis = 1_774_000_000_000L; millis < 1_830_000_000_000L; millis += 3_600_000L - 1) {
                assertThat(CliLogging.timestamp(millis, zone)).as("%s at %d", id, millis)
                        .isEqualTo(format.format(new Date(millis)));
            }
        }
    }

    @Test
    void theEpochAndItsNeighbours_andFourDigitYears() {
        TimeZone utc = TimeZone.getTimeZone("UTC");
        assertThat(CliLogging.timestamp(0, utc)).isEqualTo("1970-01-01T00:00:00.000+0000");
        assertThat(CliLogging.timestamp(-1, utc)).isEqualTo("1969-12-31T23:59:59.999+0000");
        assertThat(CliLogging.timestamp(1_796_083_200_007L, TimeZone.getTimeZone("America/St_Johns")))
                .isEqualTo("2026-11-30T20:30:00.007-0330");
    }
}
